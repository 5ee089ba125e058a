//! The core on every saved page of the corpus: parses, renders deterministically, and
//! keeps every action target of the webarena form in the occam form with its id.

use std::io::Read;
use std::path::PathBuf;

use pagelens_core::axtree::RoleClass;
use pagelens_core::render::occam::OccamOptions;
use pagelens_core::{render, AxTree, Mode};

fn corpus() -> Vec<(String, Vec<u8>)> {
    corpus_files("axtree.json.gz")
}

fn corpus_files(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/corpus") {
        let path = entry.unwrap().path().join(name);
        if !path.exists() {
            continue;
        }
        let mut data = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut data)
            .unwrap();
        pages.push((path.display().to_string(), data));
    }
    pages.sort();
    pages
}

/// The fast GPT-2 path gives tiktoken's ids on every page's raw HTML (the hardest input:
/// long whitespace runs, minified scripts, every script of the world).
#[test]
fn gpt2_ids_equal_tiktoken_on_every_page() {
    let bpe = tiktoken_rs::r50k_base_singleton();
    for (path, html) in corpus_files("source.html.gz") {
        let text = String::from_utf8_lossy(&html);
        assert_eq!(
            pagelens_core::Encoding::R50k.encode(&text),
            bpe.encode_ordinary(&text),
            "{path}"
        );
    }
}

#[test]
fn every_page_parses_and_keeps_its_targets() {
    let pages = corpus();
    assert_eq!(pages.len(), 100);
    for (name, data) in &pages {
        let tree = AxTree::parse(data).unwrap_or_else(|e| panic!("{name}: {e}"));
        let webarena = render(&tree, Mode::WebArena, OccamOptions::default(), None);
        let occam = render(&tree, Mode::Occam, OccamOptions::default(), None);
        assert_eq!(
            occam.text,
            render(&tree, Mode::Occam, OccamOptions::default(), None).text,
            "{name}"
        );
        let shown: std::collections::HashSet<i64> = occam.ids.iter().copied().collect();
        assert_eq!(shown.len(), occam.ids.len(), "{name}: an id shown twice");
        for &id in &webarena.ids {
            let node = tree.node(tree.index_of(id).unwrap());
            if node.class.has(RoleClass::INTERACTIVE) {
                assert!(shown.contains(&id), "{name}: target {id} missing");
            }
        }
        assert!(occam.text.len() <= webarena.text.len(), "{name}");
    }
}
