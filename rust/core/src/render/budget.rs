//! Spec 3.12: no silent caps. A budget cuts at a line boundary and says what it cut.

use super::{line_len, push_line_text, Line, Observation, Rendered};
use crate::tokenizer::Encoding;

fn truncation_line(omitted: usize, max_tokens: usize) -> String {
    format!("[... {omitted} more lines not shown: the page was cut to fit {max_tokens} tokens]")
}

fn text_with_cut(r: &Rendered, keep: usize, max_tokens: usize) -> String {
    let mut out = String::new();
    for l in &r.lines[..keep] {
        push_line_text(&mut out, l);
        out.push('\n');
    }
    out.push_str(&truncation_line(r.lines.len() - keep, max_tokens));
    out
}

/// Renders `r` whole when it fits in `max_tokens`, else the longest prefix of whole lines
/// that fits together with the truncation line. When not even the truncation line fits,
/// the text is the longest of its shorter forms that does (`[... N more lines]`, `[...]`),
/// else empty: never more than `max_tokens` tokens.
pub fn fit_to_budget(r: Rendered, enc: Encoding, max_tokens: usize) -> Observation {
    let text = Rendered::text_of(&r.lines);
    let total = enc.count(&text);
    if total <= max_tokens {
        let mut whole = Observation::with_text(r, text);
        whole.token_count = Some(total);
        return whole;
    }
    // Per-line counts give a close first guess; the exact count of the candidate text
    // decides, since BPE merges across line ends can shift a few tokens.
    // Counted only as far as the budget reaches: a cut near the top of a huge page does not
    // count the lines below it.
    let line_tokens = |l: &Line| {
        let mut s = String::with_capacity(line_len(l) + 1);
        push_line_text(&mut s, l);
        s.push('\n');
        enc.count(&s)
    };
    let mut per_line: Vec<usize> = Vec::new();
    let mut keep = 0usize;
    let mut used = 0usize;
    for (i, l) in r.lines.iter().enumerate() {
        let c = line_tokens(l);
        per_line.push(c);
        let tail = enc.count(&truncation_line(r.lines.len() - i - 1, max_tokens));
        if used + c + tail > max_tokens {
            break;
        }
        used += c;
        keep = i + 1;
    }
    let (text, count) = loop {
        let text = text_with_cut(&r, keep, max_tokens);
        let count = enc.count(&text);
        if count <= max_tokens || keep == 0 {
            break (text, count);
        }
        // Step back by roughly the excess, at least one line.
        let mut excess = count - max_tokens;
        while excess > 0 && keep > 0 {
            keep -= 1;
            excess = excess.saturating_sub(per_line[keep].max(1));
        }
    };
    let (text, count) = if count > max_tokens {
        let omitted = r.lines.len();
        [
            format!("[... {omitted} more lines]"),
            "[...]".to_owned(),
            String::new(),
        ]
        .into_iter()
        .map(|t| {
            let c = enc.count(&t);
            (t, c)
        })
        .find(|&(_, c)| c <= max_tokens)
        .unwrap_or_default()
    } else {
        (text, count)
    };
    let ids = r
        .ids
        .iter()
        .filter(|(line, _)| (*line as usize) < keep)
        .map(|&(_, id)| id)
        .collect();
    Observation {
        text,
        ids,
        line_count: keep + 1,
        omitted_lines: r.lines.len() - keep,
        truncated: true,
        token_count: Some(count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(n: usize) -> Rendered {
        let mut r = Rendered::default();
        for i in 0..n {
            let at = r.push_line((i % 3) as u32, format!("link [{i}] 'item number {i}'"));
            r.ids.push((at, i64::try_from(i).unwrap()));
        }
        r
    }

    #[test]
    fn whole_text_when_it_fits() {
        let o = fit_to_budget(rendered(5), Encoding::R50k, 10_000);
        assert!(!o.truncated);
        assert_eq!(o.ids.len(), 5);
        assert_eq!(o.token_count, Some(Encoding::R50k.count(&o.text)));
    }

    #[test]
    fn cut_at_a_line_boundary_within_budget() {
        for budget in [30, 100, 257, 999] {
            let o = fit_to_budget(rendered(400), Encoding::R50k, budget);
            assert!(o.truncated);
            let count = Encoding::R50k.count(&o.text);
            assert!(count <= budget, "{count} > {budget}");
            let last = o.text.lines().last().unwrap();
            assert!(
                last.contains(&format!("{} more lines", o.omitted_lines)),
                "{last}"
            );
            // Ids are exactly those on kept lines.
            assert_eq!(
                o.ids,
                (0..i64::try_from(400 - o.omitted_lines).unwrap()).collect::<Vec<_>>()
            );
        }
    }
}
