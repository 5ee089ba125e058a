//! Times parse, clean and serialize over HTML files:
//! `cargo run --release -p pagelens-core --example profile_dom -- FILE.html...`
use std::time::Instant;

fn main() {
    let files: Vec<Vec<u8>> = std::env::args()
        .skip(1)
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let mb = files.iter().map(std::vec::Vec::len).sum::<usize>() as f64 / 1e6;
    let tok = pagelens_core::Tokenizer::named("gpt2").unwrap();
    let opts = pagelens_core::dom::CleanOptions::profile("scribe").unwrap();
    let mut best = [f64::MAX; 3];
    for _ in 0..3 {
        let t = Instant::now();
        let doms: Vec<_> = files
            .iter()
            .map(|f| pagelens_core::dom::Dom::parse(f, None, false))
            .collect();
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let cleaned: Vec<_> = doms
            .iter()
            .map(|d| pagelens_core::dom::clean(d, &opts, &tok))
            .collect();
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for c in &cleaned {
            std::hint::black_box(c.serialize());
        }
        best[2] = best[2].min(t.elapsed().as_secs_f64());
    }
    println!(
        "{mb:.1} MB: parse {:.0} ms, clean {:.0} ms, serialize {:.0} ms",
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3
    );
}
