//! Spec section 4: the pivotal subtree that history replay shows for a past step.

use super::occam::{self, OccamOptions};
use super::Rendered;
use crate::axtree::{AxTree, NONE};

/// The pivotal subtree of some element ids.
#[derive(Debug, Clone)]
pub struct Pivotal {
    /// None when the subtree is over the node cap.
    pub rendered: Option<Rendered>,
    /// Requested ids that name no node of the structural tree.
    pub unknown: Vec<i64>,
    /// Element ids of every node kept, in document order.
    pub included: Vec<i64>,
}

/// Marks each pivot with its whole subtree, its ancestors, and its siblings that have a
/// name (without their subtrees). Linear: each subtree and ancestor chain is walked once.
pub fn mask(tree: &AxTree, pivots: &[u32]) -> Vec<bool> {
    let n = tree.len();
    let mut mask = vec![false; n];
    let mut whole = vec![false; n]; // subtree already marked
    let mut climbed = vec![false; n]; // ancestor chain already marked
    let mut siblings_done: Vec<bool> = vec![false; n + 1]; // by parent; n = the roots
    for &p in pivots {
        if !whole[p as usize] {
            let mut stack = vec![p];
            while let Some(x) = stack.pop() {
                if whole[x as usize] {
                    continue;
                }
                whole[x as usize] = true;
                mask[x as usize] = true;
                stack.extend_from_slice(tree.s_children(x));
            }
        }
        let parent = tree.node(p).s_parent;
        let mut a = parent;
        while a != NONE && !climbed[a as usize] {
            climbed[a as usize] = true;
            mask[a as usize] = true;
            a = tree.node(a).s_parent;
        }
        let slot = if parent == NONE { n } else { parent as usize };
        if !siblings_done[slot] {
            siblings_done[slot] = true;
            let siblings = if parent == NONE {
                &tree.s_roots[..]
            } else {
                tree.s_children(parent)
            };
            for &s in siblings {
                if !tree.node(s).norm_name().is_empty() {
                    mask[s as usize] = true;
                }
            }
        }
    }
    mask
}

/// Renders the pivotal subtree of `ids` in occam form without ids. Over `max_nodes`
/// nodes, nothing is rendered (the caller says so instead of showing a partial tree).
pub fn pivotal(tree: &AxTree, ids: &[i64], max_nodes: Option<usize>) -> Pivotal {
    let mut pivots = Vec::with_capacity(ids.len());
    let mut unknown = Vec::new();
    for &id in ids {
        match tree.index_of(id) {
            Some(i) if tree.node(i).structural => pivots.push(i),
            _ => unknown.push(id),
        }
    }
    let m = mask(tree, &pivots);
    let included: Vec<i64> = tree
        .s_order
        .iter()
        .filter(|&&i| m[i as usize])
        .map(|&i| tree.node(i).element_id)
        .collect();
    if max_nodes.is_some_and(|cap| included.len() > cap) {
        return Pivotal {
            rendered: None,
            unknown,
            included,
        };
    }
    let opts = OccamOptions {
        show_ids: false,
        show_urls: false,
        mask: Some(&m),
        ids: super::IdStyle::default(),
    };
    Pivotal {
        rendered: Some(occam::render(tree, opts)),
        unknown,
        included,
    }
}
