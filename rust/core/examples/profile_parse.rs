//! Times the phases of parsing one saved tree: `cargo run --release --example profile_parse -- FILE.json`
use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: profile_parse FILE.json");
    let data = std::fs::read(&path).expect("read");
    let mut best = [f64::MAX; 4];
    for _ in 0..10 {
        let t = Instant::now();
        let v: serde_json::Value = serde_json::from_slice(&data).unwrap();
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        drop(v);
        let t = Instant::now();
        let raw = pagelens_core::axtree::parse::parse_payload(&data).unwrap();
        best[3] = best[3].min(t.elapsed().as_secs_f64());
        drop(raw);
        let t = Instant::now();
        let tree = pagelens_core::AxTree::parse(&data).unwrap();
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let _ = pagelens_core::render(
            &tree,
            pagelens_core::Mode::Occam,
            pagelens_core::render::occam::OccamOptions::default(),
            None,
        );
        best[2] = best[2].min(t.elapsed().as_secs_f64());
    }
    let mb = data.len() as f64 / 1e6;
    println!(
        "serde_json::Value {:.1} ms ({:.0} MB/s)",
        best[0] * 1e3,
        mb / best[0]
    );
    println!(
        "AxTree::parse     {:.1} ms ({:.0} MB/s)",
        best[1] * 1e3,
        mb / best[1]
    );
    println!(
        "typed records     {:.1} ms ({:.0} MB/s)",
        best[3] * 1e3,
        mb / best[3]
    );
    println!("occam render      {:.1} ms", best[2] * 1e3);
}
