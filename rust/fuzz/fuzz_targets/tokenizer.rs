//! Any text, three encodings: ids equal tiktoken-rs's own (where its backtracking
//! pre-tokenizer can run), decoding gives the text back, and a range counted from the
//! text's running totals (`SpanCounter`) is the range counted on its own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::{Encoding, Tokenizer};

fuzz_target!(
    // The vocabularies load once, before the first input is timed (on a busy machine their
    // loading alone can outlast libFuzzer's per-input timeout).
    init: {
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            enc.encode("warm up");
        }
        let _ = (
            tiktoken_rs::r50k_base_singleton(),
            tiktoken_rs::cl100k_base_singleton(),
            tiktoken_rs::o200k_base_singleton(),
        );
    },
    |data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else { return };
        if text.is_empty() {
            return;
        }
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let ids = enc.encode(text);
            let bpe = match enc {
                Encoding::R50k => tiktoken_rs::r50k_base_singleton(),
                Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
                Encoding::O200k => tiktoken_rs::o200k_base_singleton(),
            };
            assert_eq!(bpe.decode_bytes(&ids).expect("known ids"), text.as_bytes());
            // The reference overflows its stack on long whitespace runs: compare on short texts.
            if text.len() < 2000 {
                assert_eq!(ids, bpe.encode_ordinary(text), "{enc:?} differs from tiktoken on {text:?}");
            }
            let tok = Tokenizer::Tiktoken(enc);
            let counter = tok.span_counter(text);
            let mut cuts: Vec<usize> = [0, 1, 5, 17, 40, 100, 400]
                .iter()
                .map(|&k| {
                    let mut at = (k * 7 + usize::from(data[0]) * k / 3).min(text.len());
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    at
                })
                .chain([text.len()])
                .collect();
            cuts.sort_unstable();
            for (i, &a) in cuts.iter().enumerate() {
                for &b in &cuts[i..] {
                    assert_eq!(counter.count(a, b), enc.count(&text[a..b]), "{enc:?} {:?}", &text[a..b]);
                }
            }
        }
    }
);
