//! Any bytes as HTML: parse, clean with both profiles, serialize, select and find paths.
//! The parse builds the tree html5ever's own tokenizer builds (`Dom::parse_reference`: the
//! parser's byte-search tokenizer must never change a tree). Every element's id appears once in the serialization and survives a re-parse, and the chunker reads exactly those ids from it. (The text
//! itself need not round-trip: a parser's repairs, such as a link inside a link, make trees
//! that no markup reproduces. Nor can anything written after a `<plaintext>` start tag: a
//! reader takes the rest of the file as its text, and the repairs can put elements after one;
//! HTML's serialization algorithm has the same limit.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::chunk::{chunk_serialized, ids_in, ChunkKind};
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
    // All text is escaped, raw text and comments included: read from the start, every `<`
    // opens one of our start tags, an end tag, a comment or the doctype (a name the page gave
    // may hold a `<`: it is skipped with its tag), never text.
    let starts: std::collections::HashSet<usize> = tags.iter().map(|&(at, _)| at).collect();
    let mut at = 0;
    while let Some(k) = html[at..].find('<') {
        let here = at + k;
        let rest = &html[here..];
        let end = if rest.starts_with("<!--") {
            rest.find("-->").map(|e| e + 3)
        } else if starts.contains(&here) || rest.starts_with("</") || rest.starts_with("<!DOCTYPE") {
            rest.find('>').map(|e| e + 1)
        } else {
            panic!("text forms markup at {here} of {html:?}")
        };
        at = here + end.unwrap_or(rest.len());
    }
    let ids = dom.nodes.iter().filter(|n| n.id.is_some()).count();
    assert_eq!(tags.len(), ids, "every element's start tag is written once");
    let again = Dom::parse(html.as_bytes(), Some("utf-8"), true);
    // The first `<plaintext>` element's start tag (not `<plaintextx>`, nor one in a script's
    // text): a reader takes the rest as text.
    let plaintext = tags
        .iter()
        .map(|&(at, _)| at)
        .find(|&at| {
            html[at..].starts_with("<plaintext")
                && matches!(html.as_bytes().get(at + 10), Some(b' ' | b'>' | b'/'))
        })
        .unwrap_or(html.len());
    for &(offset, id) in &tags {
        if offset <= plaintext {
            assert!(again.element(id).is_some(), "node {id} lost in a re-parse of {html:?}");
        }
    }
    // The chunker's reader of markup finds the written ids in order and no others (text cannot
    // pass for a tag); all of them outside foreign content (where it takes an SVG `<script>`'s
    // elements for script). Chunks cut where the serializer wrote the tags hold them all.
    let written: Vec<i64> = tags.iter().map(|&(_, id)| i64::from(id)).collect();
    let read = ids_in(&html, ChunkKind::Dom);
    let mut rest = written.iter();
    assert!(
        read.iter().all(|id| rest.any(|w| w == id)),
        "the chunker reads ids that were not written in {html:?}"
    );
    if !dom.nodes.iter().any(|n| n.foreign) {
        let before_plaintext = tags.iter().filter(|&&(offset, _)| offset <= plaintext).count();
        assert_eq!(read, written[..before_plaintext], "the chunker misreads {html:?}");
    }
    let tok = Tokenizer::named("gpt2").expect("embedded");
    let chunks = chunk_serialized(&html, &tags, 64, &tok, false).expect("a budget");
    let held: Vec<i64> = chunks.iter().flat_map(|c| c.node_ids.clone()).collect();
    assert_eq!(held, written);
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
