//! Any bytes as a CDP accessibility-tree payload: parsing either fails with an error or gives a
//! tree whose two renderings, pivotal subtree and budget cut all hold their invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::render::occam::OccamOptions;
use pagelens_core::render::subtree::pivotal;
use pagelens_core::render::{fit_to_budget, Rendered};
use pagelens_core::{render, AxTree, Encoding, Mode};

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = AxTree::parse(data) else { return };
    let occam = OccamOptions { show_ids: true, show_urls: false, mask: None };
    for mode in [Mode::Occam, Mode::WebArena] {
        let obs = render(&tree, mode, occam, None);
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
