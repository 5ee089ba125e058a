//! pagelens' own capture (rows and a string table, `capture.js`) built from any bytes: mostly
//! well-formed rows (small indices, parents that may or may not come first, property kinds in
//! and out of range) and the raw bytes as a payload too. The reader either refuses with an
//! error or builds a tree whose every action target is printed with its id exactly once, and
//! only ids the rows gave are printed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::axtree::rows::encode;
use pagelens_core::axtree::{ParseOptions, RoleClass};
use pagelens_core::render::occam::{render, OccamOptions};
use pagelens_core::AxTree;

const ROLES: [&str; 12] = [
    "RootWebArea", "StaticText", "link", "button", "generic", "list", "listitem", "ListMarker",
    "combobox", "MenuListPopup", "option", "table",
];

fn rows_payload(data: &[u8]) -> String {
    let mut bytes = data.iter().copied();
    let mut next = move || bytes.next().unwrap_or(0);
    let extra = usize::from(next() % 8);
    let mut strings: Vec<String> = ROLES.iter().map(|r| (*r).to_owned()).collect();
    for k in 0..extra {
        let len = usize::from(next() % 12);
        let s: String = (0..len).map(|_| char::from(b' ' + next() % 95)).collect();
        strings.push(format!("{s}{k}"));
    }
    let n_strings = strings.len() as i64;
    let small = |b: u8, bound: i64| i64::from(b) % (bound + 2) - 1; // -1 ..= bound
    let n_rows = usize::from(next() % 40) + 1;
    let mut rows: Vec<i64> = Vec::new();
    for r in 0..n_rows {
        let id_step = i64::from(next()) % 7 - 1; // repeats and steps back too
        let back = if r == 0 { 0 } else { i64::from(next()) % (r as i64 + 2) };
        let flags = i64::from(next() % 128);
        rows.extend([id_step, back, small(next(), n_strings - 1), small(next(), n_strings - 1), flags]);
        if flags & 16 != 0 {
            rows.push(small(next(), n_strings - 1));
        }
        if flags & 32 != 0 {
            rows.push(small(next(), n_strings - 1));
        }
        if flags & 64 != 0 {
            let nprops = i64::from(next() % 4);
            rows.push(nprops);
            for _ in 0..nprops {
                rows.extend([small(next(), n_strings - 1), i64::from(next() % 5), small(next(), n_strings - 1)]);
            }
        }
    }
    let rows = encode(&rows);
    serde_json::json!({"result": {"result": {"type": "object", "value": {"v": 2, "s": strings, "r": rows}}}})
        .to_string()
}

fn check(payload: &[u8]) {
    let Ok(tree) = AxTree::parse_page(payload, None, &[], ParseOptions::default()) else {
        return;
    };
    let obs = render(&tree, OccamOptions::default());
    let mut seen = std::collections::HashSet::new();
    for (_, id) in &obs.ids {
        assert!(seen.insert(*id), "id {id} printed twice");
        assert!(tree.index_of(*id).is_some(), "id {id} names no node");
    }
    for &n in &tree.s_order {
        let node = tree.node(n);
        if node.class.has(RoleClass::TARGET) {
            assert!(seen.contains(&node.element_id), "target {} ({}) not printed", node.element_id, node.role);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(rows_payload(data).as_bytes());
    check(data);
});
