//! Times the Rust side of one `pagelens prep` step over HTML files, phase by phase, each page
//! twice (the bench's two steps): parse, count the raw page, clean, serialize, chunk.
//! `cargo run --release -p pagelens-core --example profile_prep -- FILE.html...`
use pagelens_core::chunk::{chunk, ChunkKind};
use pagelens_core::dom::{clean, CleanOptions, Dom};
use std::time::Instant;

fn main() {
    let files: Vec<String> = std::env::args()
        .skip(1)
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).expect("read")).into_owned())
        .collect();
    let mb = files.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let tok = pagelens_core::Tokenizer::named("gpt2").unwrap();
    let opts = CleanOptions::profile("scribe").unwrap();
    // The vocabulary's tables are built on first use: not timed.
    tok.count("warm up");
    let only_parse = std::env::var("ONLY_PARSE").is_ok();
    let only_count = std::env::var("ONLY_COUNT").is_ok();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut best = [f64::MAX; 7];
    let mut clean_mb = 0.0;
    for _ in 0..rounds {
        let mut took = [0.0; 7];
        clean_mb = 0.0;
        for f in files.iter().chain(files.iter()) {
            if only_count {
                let t = Instant::now();
                std::hint::black_box(tok.count(f));
                took[1] += t.elapsed().as_secs_f64();
                continue;
            }
            let t = Instant::now();
            let dom = Dom::parse(f.as_bytes(), None, false);
            took[0] += t.elapsed().as_secs_f64();
            if only_parse {
                continue;
            }
            let t = Instant::now();
            std::hint::black_box(tok.count(f));
            took[1] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let cleaned = clean(&dom, &opts, &tok);
            took[2] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let (html, _) = cleaned.serialize();
            took[3] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            std::hint::black_box(chunk(&html, 4096, &tok, ChunkKind::Dom, false).unwrap());
            took[4] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            std::hint::black_box(tok.span_counter(&html));
            took[5] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            std::hint::black_box(tok.count(&html));
            took[6] += t.elapsed().as_secs_f64();
            clean_mb += html.len() as f64 / 1e6;
        }
        for (b, t) in best.iter_mut().zip(took) {
            *b = b.min(t);
        }
    }
    let names = [
        "parse",
        "count raw",
        "clean",
        "serialize",
        "chunk",
        "(of which span counter",
        "count cleaned)",
    ];
    let total: f64 = best[..5].iter().sum();
    print!(
        "{mb:.1} MB x2 (cleaned {clean_mb:.1} MB): total {:.0} ms;",
        total * 1e3
    );
    for (n, b) in names.iter().zip(best) {
        print!(" {n} {:.0} ms", b * 1e3);
    }
    println!();
}
