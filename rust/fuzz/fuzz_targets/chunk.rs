//! Any text, any budget, both kinds: the chunks cover the input exactly, in order, each
//! within the budget unless it is one oversized unit's piece.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::chunk::{chunk, ChunkKind};
use pagelens_core::Tokenizer;

fuzz_target!(
    // GPT-2's vocabulary loads once, before the first input is timed.
    init: {
        Tokenizer::named("gpt2").expect("embedded").count("warm up");
    },
    |data: &[u8]| {
        let Some((&head, rest)) = data.split_first() else { return };
        let Ok(text) = std::str::from_utf8(rest) else { return };
        let budget = usize::from(head % 64) + 1;
        let kind = if head & 0x80 == 0 { ChunkKind::Dom } else { ChunkKind::Text };
        let tok = Tokenizer::named("gpt2").expect("embedded");
        for from_end in [false, true] {
            let chunks = chunk(text, budget, &tok, kind, from_end).expect("a budget of at least 1");
            let mut at = 0;
            for c in &chunks {
                assert_eq!(c.start, at, "chunks must be contiguous");
                assert!(c.end > c.start || text.is_empty());
                assert!(c.token_count <= budget || c.oversized, "{} tokens over {budget}", c.token_count);
                assert_eq!(c.token_count, tok.count(&text[c.start..c.end]));
                at = c.end;
            }
            assert_eq!(at, text.len(), "chunks must cover the text");
        }
    }
);
