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

/// `Dom::parse`'s tokenizer builds the tree html5ever's own tokenizer builds: on every page's
/// source and serialized DOM, with CR LF line ends, and cut short at places where an end of
/// input lands inside a tag, a comment, a reference or a script.
#[test]
fn the_parsers_tokenizer_builds_html5evers_tree_on_every_page() {
    use pagelens_core::dom::Dom;
    let same = |what: &str, html: &[u8]| {
        let fast = Dom::parse(html, None, false);
        let reference = Dom::parse_reference(html, None, false);
        if fast != reference {
            let (a, b) = (fast.serialize().0, reference.serialize().0);
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            panic!(
                "{what}: trees differ (serialized from byte {at}: {:?} against html5ever's {:?})",
                &a[at.saturating_sub(60).min(a.len())..(at + 60).min(a.len())],
                &b[at.saturating_sub(60).min(b.len())..(at + 60).min(b.len())]
            );
        }
    };
    let mut pages = 0;
    for file in ["source.html.gz", "dom.html.gz"] {
        for (path, html) in corpus_files(file) {
            pages += 1;
            same(&path, &html);
            let crlf = String::from_utf8_lossy(&html).replace('\n', "\r\n");
            same(&format!("{path} with CR LF"), crlf.as_bytes());
            if file == "source.html.gz" {
                // Cut just after a `<`, a `&`, a quote or a `-`, at eight places in the page.
                for k in 1..=8 {
                    let from = html.len() * k / 9;
                    if let Some(i) = html[from..]
                        .iter()
                        .position(|c| matches!(c, b'<' | b'&' | b'"' | b'-'))
                    {
                        let cut = from + i + 1 + k % 3;
                        same(
                            &format!("{path} cut at {cut}"),
                            &html[..cut.min(html.len())],
                        );
                    }
                }
            }
        }
    }
    assert_eq!(pages, 200);
}
