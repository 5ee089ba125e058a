//! Any bytes as a live DOM (what `DOM.getDocument` gives the live HTML observation): a tree of
//! elements with page-written tag names, attributes, texts and comments. Built node for node
//! (`Dom::from_nodes`), every kept element has one id, and a reader of the serialized markup
//! (the chunker, as prompts are cut) finds exactly those ids in document order: nothing the
//! page wrote reads as an element or an id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::chunk::{chunk, ChunkKind};
use pagelens_core::dom::{Dom, LiveKind, LiveNode};
use pagelens_core::Tokenizer;

const TAGS: [&str; 16] = [
    "p", "b", "div", "script", "style", "plaintext", "textarea", "xmp", "noscript", "iframe",
    "template", "br", "svg", "select", "table", "pre",
];
const ATTRS: [&str; 6] = ["node", "NODE", "data-pagelens-node", "id", "href", "x\"y"];

fuzz_target!(|data: &[u8]| {
    // Each node takes a 4-byte header (kind, parent, tag or attribute, text length) and its text.
    let mut nodes: Vec<LiveNode> = Vec::new();
    let mut elements: Vec<u32> = Vec::new();
    let mut rest = data;
    while rest.len() >= 4 && nodes.len() < 200 {
        let (head, tail) = rest.split_at(4);
        let len = usize::from(head[3] % 32).min(tail.len());
        let text = String::from_utf8_lossy(&tail[..len]).into_owned();
        rest = &tail[len..];
        let parent = if elements.is_empty() || head[1] % 5 == 0 {
            None
        } else {
            Some(elements[usize::from(head[1]) % elements.len()])
        };
        let kind = match head[0] % 6 {
            0..=2 => {
                elements.push(u32::try_from(nodes.len()).unwrap_or(0));
                LiveKind::Element {
                    tag: TAGS[usize::from(head[2]) % TAGS.len()].to_owned(),
                    attrs: vec![(ATTRS[usize::from(head[2] >> 4) % ATTRS.len()].to_owned(), text)],
                    foreign: head[0] & 0x80 != 0,
                }
            }
            3 | 4 => LiveKind::Text(text),
            _ => LiveKind::Comment(text),
        };
        nodes.push(LiveNode { parent, kind });
    }
    let (dom, ids) = Dom::from_nodes(&nodes).expect("parents always come first");
    let mut given: Vec<u32> = ids.iter().flatten().copied().collect();
    given.sort_unstable();
    let count = dom.element_count();
    assert!(given.iter().copied().eq(0..u32::try_from(count).unwrap_or(0)), "each kept element once");
    let (html, _) = dom.serialize();
    let tok = Tokenizer::named("gpt2").expect("embedded");
    let read: Vec<i64> = chunk(&html, usize::MAX / 2, &tok, ChunkKind::Dom, false)
        .expect("a budget")
        .into_iter()
        .flat_map(|c| c.node_ids)
        .collect();
    let expected: Vec<i64> = (0..i64::try_from(count).unwrap_or(0)).rev().collect();
    assert_eq!(read, expected, "what a reader finds in {html:?}");
});
