//! Spec section 2: the base text form that published `WebArena` agents print.

use super::{IdLabels, IdStyle, Rendered, OWN_BRACKET};
use crate::axtree::roles::{webarena_drop_role, webarena_hidden_prop};
use crate::axtree::{AxTree, RoleClass};
use crate::text::{is_blank, push_py_repr};

/// Renders every kept node, one TAB per kept ancestor; `labels` print in place of ids (this
/// form marks nothing new: it is the published agents' form).
pub fn render(tree: &AxTree, labels: Option<&IdLabels>) -> Rendered {
    let ids = IdStyle { labels, seen: None };
    let mut out = Rendered::default();
    let mut stack: Vec<(u32, u32)> = tree.s_roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let node = tree.node(i);
        let props = tree.props(i);
        let kept_props = props
            .iter()
            .filter(|p| !webarena_hidden_prop(&p.name))
            .count();
        let blank = is_blank(&node.name);
        let dropped = (blank && kept_props == 0 && webarena_drop_role(&node.role))
            || (blank && node.class.has(RoleClass::LIST_ITEM));
        let child_depth = if dropped {
            depth
        } else {
            let mut line = String::with_capacity(node.role.len() + node.name.len() + 16);
            line.push_str(&node.role);
            let shown = ids.push(&mut line, node.element_id, true, false);
            if !node.name.is_empty() {
                line.push(' ');
                push_py_repr(&mut line, &node.name);
            }
            for p in props.iter().filter(|p| !webarena_hidden_prop(&p.name)) {
                line.push(' ');
                line.push(OWN_BRACKET); // a property: pagelens' own bracket
                line.push_str(&p.name);
                line.push_str(": ");
                line.push_str(&p.value.py_str());
                line.push(']');
            }
            let at = out.push_line(depth, line);
            if shown {
                out.ids.push((at, node.element_id));
            }
            depth + 1
        };
        for &c in tree.s_children(i).iter().rev() {
            stack.push((c, child_depth));
        }
    }
    out.seal();
    out
}
