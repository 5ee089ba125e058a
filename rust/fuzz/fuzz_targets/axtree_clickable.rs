//! Any bytes as a CDP accessibility-tree payload with clickable elements (as the live
//! observation marks them from `DOMSnapshot`): the backend ids named by the input's bytes are
//! clickable. Every action target of the structural tree, clickable or not, is printed with
//! its id exactly once in the occam form, and rendering stays linear in the payload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::axtree::{Clickables, ParseOptions, RoleClass};
use pagelens_core::render::occam::{render, OccamOptions};
use pagelens_core::AxTree;

fuzz_target!(|data: &[u8]| {
    let mut clickable = Clickables::new();
    for (k, &b) in data.iter().enumerate().filter(|(k, _)| k % 5 == 0).take(64) {
        let hint = (k % 2 == 0).then_some("icon");
        clickable.insert(i64::from(b), hint);
    }
    let Ok(tree) = AxTree::parse_page(data, Some(&clickable), &[], ParseOptions::default()) else {
        return;
    };
    let obs = render(&tree, OccamOptions::default());
    let text_len: usize = obs.lines.iter().map(|l| l.text.len() + 64).sum();
    assert!(text_len <= 100 * data.len() + 1024, "{text_len} bytes from {}", data.len());
    let mut seen = std::collections::HashSet::new();
    for (_, id) in &obs.ids {
        assert!(seen.insert(*id), "id {id} printed twice");
    }
    for &n in &tree.s_order {
        let node = tree.node(n);
        if node.class.has(RoleClass::TARGET) {
            assert!(seen.contains(&node.element_id), "target {} ({}) not printed", node.element_id, node.role);
        }
    }
});
