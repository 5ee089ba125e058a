//! Any bytes as HTML: parse, clean with both profiles, serialize, select and find paths.
//! The parse builds the tree html5ever's own tokenizer builds (`Dom::parse_reference`: the
//! parser's byte-search tokenizer must never change a tree). Every element's id appears once in the serialization and survives a re-parse. (The text
//! itself need not round-trip: a parser's repairs, such as a link inside a link, make trees
//! that no markup reproduces. Nor can anything written after a `<plaintext>` start tag: a
//! reader takes the rest of the file as its text, and the repairs can put elements after one;
//! HTML's serialization algorithm has the same limit.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::dom::{clean, CleanOptions, Dom, Selector};
use pagelens_core::Tokenizer;

fuzz_target!(|data: &[u8]| {
    let keep_ids = data.first().is_some_and(|b| b & 1 == 1);
    let dom = Dom::parse(data, None, keep_ids);
    assert!(
        dom == Dom::parse_reference(data, None, keep_ids),
        "the tokenizer changed the tree of {:?}",
        String::from_utf8_lossy(data)
    );
    let (html, tags) = dom.serialize();
    let ids = dom.nodes.iter().filter(|n| n.id.is_some()).count();
    assert_eq!(tags.len(), ids, "every element's start tag is written once");
    let again = Dom::parse(html.as_bytes(), Some("utf-8"), true);
    let plaintext = html.find("<plaintext").unwrap_or(html.len());
    for &(offset, id) in &tags {
        if offset <= plaintext {
            assert!(again.element(id).is_some(), "node {id} lost in a re-parse of {html:?}");
        }
    }
    let tok = Tokenizer::named("gpt2").expect("embedded");
    for profile in ["scribe", "minimal"] {
        let o = CleanOptions::profile(profile).expect("a profile");
        let cleaned = clean(&dom, &o, &tok);
        let _ = cleaned.serialize();
    }
    let query: String = String::from_utf8_lossy(data).chars().take(64).collect();
    if let Ok(sel) = Selector::parse(&query) {
        let _ = dom.select(&sel);
    }
    let _ = dom.find_path(&query);
});
