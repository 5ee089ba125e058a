use std::time::Instant;
fn main() {
    for depth in [10_000usize, 100_000] {
        let deep = "<div>".repeat(depth) + "x";
        let t = Instant::now();
        let dom = pagelens_core::dom::Dom::parse(deep.as_bytes(), None, false);
        let p = t.elapsed();
        let t = Instant::now();
        let tok = pagelens_core::Tokenizer::named("gpt2").unwrap();
        let c = pagelens_core::dom::clean(
            &dom,
            &pagelens_core::dom::CleanOptions::profile("scribe").unwrap(),
            &tok,
        );
        let _ = c.serialize();
        println!("{depth}: parse {:?} clean+ser {:?}", p, t.elapsed());
    }
}
