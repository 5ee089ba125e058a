//! Any bytes as a CDP accessibility-tree payload: parsing either fails with an error or gives a
//! tree whose two renderings, pivotal subtree and budget cut all hold their invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::render::occam::OccamOptions;
use pagelens_core::render::subtree::pivotal;
use pagelens_core::render::{fit_to_budget, IdStyle, Rendered};
use rustc_hash::{FxHashMap, FxHashSet};
use pagelens_core::{render, AxTree, Encoding, Mode};

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = AxTree::parse(data) else { return };
    let occam = OccamOptions::default();
    // Labels and new-element marks change how ids print, never what is shown.
    let labels: FxHashMap<i64, String> = tree.nodes().iter().map(|n| (n.element_id, format!("L{}", n.element_id))).collect();
    let seen: FxHashSet<i64> = tree.nodes().iter().map(|n| n.element_id).filter(|id| id % 2 == 0).collect();
    let styled = OccamOptions { ids: IdStyle { labels: Some(&labels), seen: Some(&seen) }, ..occam };
    for mode in [Mode::Occam, Mode::WebArena] {
        let obs = render(&tree, mode, occam, None);
        let restyled = render(&tree, mode, styled, None);
        assert_eq!(obs.ids, restyled.ids);
        assert_eq!(obs.line_count, restyled.line_count);
        // Linear: a bounded multiple of the payload (indentation stops at 64 levels).
        assert!(obs.text.len() <= 100 * data.len() + 1024, "{} bytes from {}", obs.text.len(), data.len());
        for id in &obs.ids {
            assert!(tree.index_of(*id).is_some(), "shown id {id} is not in the tree");
        }
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
