//! Any bytes as a CDP accessibility-tree payload: parsing either fails with an error or gives a
//! tree whose two renderings, pivotal subtree and budget cut all hold their invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::render::occam::OccamOptions;
use pagelens_core::render::subtree::pivotal;
use pagelens_core::render::{fit_to_budget, IdStyle, Rendered};
use rustc_hash::{FxHashMap, FxHashSet};
use pagelens_core::{render, AxTree, Encoding, Mode};

/// What a reader takes for ids (spec 3.16): on each line, a `[` with no backslash before it,
/// white space, an optional `*`, white space, 1-64 characters that are not white space,
/// brackets or `*`, white space, `]`; pagelens' properties (`[name: value]`) aside.
fn ids_read(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let chars: Vec<char> = line.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if c != '[' || (i > 0 && chars[i - 1] == '\\') {
                continue;
            }
            let mut j = i + 1;
            let skip = |j: &mut usize| {
                while *j < chars.len() && chars[*j].is_whitespace() {
                    *j += 1;
                }
            };
            skip(&mut j);
            if j < chars.len() && chars[j] == '*' {
                j += 1;
            }
            skip(&mut j);
            let start = j;
            while j < chars.len() && j - start < 64 && !chars[j].is_whitespace() && !matches!(chars[j], '[' | ']' | '*') {
                j += 1;
            }
            let content: String = chars[start..j].iter().collect();
            skip(&mut j);
            if !content.is_empty() && j < chars.len() && chars[j] == ']' && !content.ends_with(':') {
                out.push(content);
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = AxTree::parse(data) else { return };
    let occam = OccamOptions::default();
    // Labels and new-element marks change how ids print, never what is shown.
    let labels: FxHashMap<i64, String> = tree.nodes().iter().map(|n| (n.element_id, format!("L{}", n.element_id))).collect();
    let seen: FxHashSet<i64> = tree.nodes().iter().map(|n| n.element_id).filter(|id| id % 2 == 0).collect();
    let styled = OccamOptions { ids: IdStyle { labels: Some(&labels), seen: Some(&seen) }, ..occam };
    for mode in Mode::ALL {
        let obs = render(&tree, mode, occam, None);
        let restyled = render(&tree, mode, styled, None);
        assert_eq!(obs.ids, restyled.ids);
        assert_eq!(obs.line_count, restyled.line_count);
        // Linear: a bounded multiple of the payload (indentation stops at 64 levels).
        assert!(obs.text.len() <= 100 * data.len() + 1024, "{} bytes from {}", obs.text.len(), data.len());
        for id in &obs.ids {
            assert!(tree.index_of(*id).is_some(), "shown id {id} is not in the tree");
        }
        // Page text never reads as an id or a mark: a reader finds exactly the ids, in order.
        let read = ids_read(&obs.text);
        let want: Vec<String> = obs.ids.iter().map(i64::to_string).collect();
        assert_eq!(read, want, "{}", obs.text);
        let relabelled = ids_read(&restyled.text);
        let want: Vec<String> = restyled.ids.iter().map(|id| format!("L{id}")).collect();
        assert_eq!(relabelled, want, "{}", restyled.text);
    }
    let ids: Vec<i64> = data.iter().take(4).map(|&b| i64::from(b)).collect();
    let p = pivotal(&tree, &ids, Some(50));
    if let Some(r) = &p.rendered {
        let _ = Rendered::text_of(&r.lines);
    }
    let rendered = pagelens_core::render::occam::render(&tree, occam);
    let budget = usize::from(data.first().copied().unwrap_or(0));
    let cut = fit_to_budget(rendered, Encoding::R50k, budget);
    if cut.truncated {
        assert!(cut.token_count.unwrap_or(0) <= budget.max(1) + 32);
    }
});
