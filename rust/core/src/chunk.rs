//! Spec `dom.md` section 4: cutting a serialized DOM or an observation text into chunks of
//! at most `max_tokens` tokens. Chunks are byte ranges of the input, so joining them gives
//! the input back; cuts fall only before a start tag (DOM) or at a line start (text).

/// A chunking request that cannot be met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkError {
    UnknownKind(String),
    /// A budget of zero tokens holds nothing.
    ZeroBudget,
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::UnknownKind(kind) => {
                write!(
                    f,
                    "unknown chunk kind {kind:?}; expected \"dom\" or \"text\""
                )
            }
            ChunkError::ZeroBudget => f.write_str("max_tokens must be at least 1"),
        }
    }
}

impl std::error::Error for ChunkError {}
use crate::dom::tokenize::{ends_tag_name, markup_end, raw_text_end};
use crate::dom::tree::RAW_TEXT_ELEMENTS;
use crate::tokenizer::Tokenizer;

/// What the text is, which decides where it may be cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    /// Cut only before an element's start tag (`<` followed by a letter).
    Dom,
    /// Cut only at the start of a line.
    Text,
}

impl ChunkKind {
    /// Every chunk kind by name (the registry the binding and docs read).
    pub const NAMES: [&'static str; 2] = ["dom", "text"];
}

impl std::str::FromStr for ChunkKind {
    type Err = ChunkError;
    fn from_str(s: &str) -> Result<Self, ChunkError> {
        match s {
            "dom" => Ok(ChunkKind::Dom),
            "text" => Ok(ChunkKind::Text),
            other => Err(ChunkError::UnknownKind(other.to_owned())),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Byte range in the input.
    pub start: usize,
    pub end: usize,
    pub token_count: usize,
    /// `node="N"` ids of the start tags in the chunk (DOM), or `[N]` ids (text).
    pub node_ids: Vec<i64>,
    /// A piece of one unit too large for the budget, cut at token boundaries.
    pub oversized: bool,
}

/// Start tags of HTML text as a parser sees them: `(start, end)` byte spans of each `<name
/// ...>`, skipping comments and the contents of raw-text elements, so that text (a comment, an
/// iframe's source) cannot pass for a tag or forge a `node="N"` id.
fn start_tags(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &b[i..]) {
        i += at;
        if !b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            // A comment, doctype, end tag or bogus comment is skipped whole, as a parser
            // skips it (a doctype's name may hold `<script>`); else the `<` is text.
            i = markup_end(b, i).unwrap_or(i + 1);
            continue;
        }
        let end = memchr::memchr(b'>', &b[i..]).map_or(b.len(), |e| i + e + 1);
        tags.push((i, end));
        // The name runs to a space, `/` or `>`, as the tokenizer reads it (`<script.x>` is
        // no script).
        let name_end = b[i + 1..end]
            .iter()
            .position(|&c| ends_tag_name(c))
            .map_or(end, |p| i + 1 + p);
        let name = &b[i + 1..name_end];
        i = end;
        if let Some(raw) = RAW_TEXT_ELEMENTS
            .iter()
            .find(|r| r.as_bytes().eq_ignore_ascii_case(name))
        {
            if *raw == "plaintext" {
                break; // everything after it is text
            }
            i = raw_text_end(b, i, raw.as_bytes()).unwrap_or(b.len());
        }
    }
    tags
}

/// Offsets where a cut is allowed, always including 0 and `text.len()`: a DOM's start tags
/// (`tags`), a text's line starts.
fn boundaries(text: &str, kind: ChunkKind, tags: &[(usize, Option<i64>)]) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = vec![0];
    match kind {
        ChunkKind::Dom => out.extend(tags.iter().map(|&(s, _)| s).filter(|&s| s > 0)),
        ChunkKind::Text => {
            let body = &b[..b.len().saturating_sub(1)];
            out.extend(
                body.iter()
                    .enumerate()
                    .filter(|(_, &c)| c == b'\n')
                    .map(|(i, _)| i + 1),
            );
        }
    }
    if *out.last().unwrap() != b.len() {
        out.push(b.len());
    }
    out.dedup();
    out
}

/// The `node="N"` id of a start tag: the serializer writes it as the tag's last attribute,
/// and attribute values cannot hold a bare `"`, so only the real one ends the tag so.
fn node_id_of(tag: &str) -> Option<i64> {
    let body = tag.strip_suffix('>').unwrap_or(tag).trim_end_matches('/');
    let value = body.strip_suffix('"')?;
    let at = value.rfind(" node=\"")?;
    let digits = &value[at + 7..];
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Ids named in a piece of text.
pub fn ids_in(text: &str, kind: ChunkKind) -> Vec<i64> {
    let b = text.as_bytes();
    let mut ids = Vec::new();
    match kind {
        ChunkKind::Dom => {
            for (start, end) in start_tags(text) {
                if let Some(id) = node_id_of(&text[start..end]) {
                    ids.push(id);
                }
            }
        }
        ChunkKind::Text => {
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'[' {
                    let mut j = i + 1;
                    if b.get(j) == Some(&b'-') {
                        j += 1;
                    }
                    let digits_start = j;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    if j > digits_start && b.get(j) == Some(&b']') {
                        if let Ok(id) = text[i + 1..j].parse() {
                            ids.push(id);
                        }
                        i = j;
                    }
                }
                i += 1;
            }
        }
    }
    ids
}

/// Splits `text` into chunks of at most `max_tokens` tokens, packing whole units greedily
/// from the start (or from the end, as `ScribeAgent`'s inference does).
///
/// # Errors
/// A budget of zero tokens.
pub fn chunk(
    text: &str,
    max_tokens: usize,
    tok: &Tokenizer,
    kind: ChunkKind,
    from_end: bool,
) -> Result<Vec<Chunk>, ChunkError> {
    let tags: Vec<(usize, Option<i64>)> = match kind {
        ChunkKind::Dom => start_tags(text)
            .into_iter()
            .map(|(s, e)| (s, node_id_of(&text[s..e])))
            .collect(),
        ChunkKind::Text => Vec::new(),
    };
    chunk_units(text, max_tokens, tok, kind, from_end, &tags)
}

/// [`chunk`] of a document's serialization (`html`), cut before its elements' start tags where
/// the serializer wrote them (`tags`: each one's offset and id, in order, as
/// [`crate::dom::Dom::serialize`] gives them) instead of where a reader of the markup finds
/// them: exact whatever the markup (a reader takes an SVG `<script>`'s elements for script).
///
/// # Errors
/// A budget of zero tokens.
pub fn chunk_serialized(
    html: &str,
    tags: &[(usize, u32)],
    max_tokens: usize,
    tok: &Tokenizer,
    from_end: bool,
) -> Result<Vec<Chunk>, ChunkError> {
    let tags: Vec<(usize, Option<i64>)> = tags
        .iter()
        .map(|&(at, id)| (at, Some(i64::from(id))))
        .collect();
    chunk_units(html, max_tokens, tok, ChunkKind::Dom, from_end, &tags)
}

/// The chunking of `text` whose DOM units start at `tags` (offsets in order, with the id
/// each start tag names).
fn chunk_units(
    text: &str,
    max_tokens: usize,
    tok: &Tokenizer,
    kind: ChunkKind,
    from_end: bool,
    tags: &[(usize, Option<i64>)],
) -> Result<Vec<Chunk>, ChunkError> {
    if max_tokens == 0 {
        return Err(ChunkError::ZeroBudget);
    }
    if text.is_empty() {
        return Ok(Vec::new());
    }
    // Ids named in `text[a..b]` (a and b cuts): a DOM's from the ids of its start tags in the
    // range (found once: those `ids_in` finds in it, a cut leaving a reader in its data state).
    let ids_between = |a: usize, b: usize| match kind {
        ChunkKind::Dom => {
            let first = tags.partition_point(|&(s, _)| s < a);
            let last = tags.partition_point(|&(s, _)| s < b);
            tags[first..last].iter().filter_map(|&(_, id)| id).collect()
        }
        ChunkKind::Text => ids_in(&text[a..b], kind),
    };
    let cuts = boundaries(text, kind, tags);
    let units: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    // Every unit and every chunk is counted exactly, from one tokenization of the text.
    let counter = tok.span_counter(text);
    let counts: Vec<usize> = units.iter().map(|&(a, b)| counter.count(a, b)).collect();
    let mut ranges: Vec<(usize, usize, usize, bool)> = Vec::new(); // start, end, tokens, oversized
    let n = units.len();
    // Walk units in the chosen direction; `first..last` is the current run (inclusive).
    let order: Vec<usize> = if from_end {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    let mut unit_ids: rustc_hash::FxHashMap<usize, Vec<i64>> = rustc_hash::FxHashMap::default();
    let mut k = 0;
    while k < n {
        let u = order[k];
        if counts[u] > max_tokens {
            let (a, b) = units[u];
            let mut pieces = split_unit(text, a, b, max_tokens, tok);
            if from_end {
                pieces.reverse();
            }
            // A start tag cut across pieces still names its element: the unit's ids go with
            // the piece that holds the tag's beginning.
            unit_ids.insert(a, ids_between(a, b));
            ranges.extend(pieces.into_iter().map(|(s, e, c)| (s, e, c, true)));
            k += 1;
            continue;
        }
        // Grow by estimate, then confirm with an exact count and shrink if BPE disagrees.
        let mut j = k;
        let mut estimate = counts[u];
        while j + 1 < n
            && counts[order[j + 1]] <= max_tokens
            && estimate + counts[order[j + 1]] <= max_tokens
        {
            j += 1;
            estimate += counts[order[j]];
        }
        loop {
            let (s, e) = span(&units, &order, k, j);
            let exact = counter.count(s, e);
            if exact <= max_tokens || j == k {
                ranges.push((s, e, exact, false));
                break;
            }
            j -= 1;
        }
        k = j + 1;
    }
    if from_end {
        ranges.reverse();
    }
    Ok(ranges
        .into_iter()
        .map(|(start, end, token_count, oversized)| Chunk {
            start,
            end,
            token_count,
            node_ids: if oversized {
                // Pieces of a unit: the first carries the unit's ids, the others none.
                unit_ids.remove(&start).unwrap_or_default()
            } else {
                ids_between(start, end)
            },
            oversized,
        })
        .collect())
}

fn span(units: &[(usize, usize)], order: &[usize], k: usize, j: usize) -> (usize, usize) {
    let (a, b) = (units[order[k]], units[order[j]]);
    (a.0.min(b.0), a.1.max(b.1))
}

/// Cuts one unit at token boundaries (that are also character boundaries) into pieces of
/// at most `max_tokens` tokens each, confirmed by recounting each piece.
///
/// The unit is tokenized once; a piece's end is first the last character boundary within
/// `max_tokens` of the unit's tokens from its start. Re-tokenizing the piece on its own can
/// give more tokens than that (a token cut at the start): then the end is found by bisection
/// over the character-boundary token ends before it, so each piece costs O(log budget)
/// counts of at most its own length — time O(n log budget) over the unit, never a step back
/// per token.
fn split_unit(
    text: &str,
    a: usize,
    b: usize,
    max_tokens: usize,
    tok: &Tokenizer,
) -> Vec<(usize, usize, usize)> {
    let unit = &text[a..b];
    let token_ends = tok.token_ends(unit);
    // Token ends that are character boundaries: the only places a piece may end.
    let mut char_ends: Vec<usize> = token_ends
        .iter()
        .copied()
        .filter(|&e| e > 0 && unit.is_char_boundary(e))
        .collect();
    char_ends.dedup();
    let mut pieces = Vec::new();
    let mut start = 0usize;
    while start < unit.len() {
        // The end of the max_tokens-th token after `start`, in the unit's own tokens.
        let first = token_ends.partition_point(|&e| e <= start);
        let reach = token_ends
            .get(first + max_tokens - 1)
            .copied()
            .unwrap_or(unit.len());
        // Candidate ends: char-boundary token ends in (start, reach], and the unit's end.
        let lo = char_ends.partition_point(|&e| e <= start);
        let hi = char_ends.partition_point(|&e| e <= reach);
        let mut end = if reach >= unit.len() {
            unit.len()
        } else if hi > lo {
            char_ends[hi - 1]
        } else {
            0
        };
        let mut count = if end > start {
            tok.count(&unit[start..end])
        } else {
            usize::MAX
        };
        if count > max_tokens {
            // Bisect the candidates char_ends[lo..hi] for the last one within budget.
            let (mut good, mut bad) = (None, hi.min(char_ends.len()));
            let mut left = lo;
            while left < bad {
                let mid = left + (bad - left) / 2;
                let c = tok.count(&unit[start..char_ends[mid]]);
                if c <= max_tokens {
                    good = Some((char_ends[mid], c));
                    left = mid + 1;
                } else {
                    bad = mid;
                }
            }
            if let Some((e, c)) = good {
                (end, count) = (e, c);
            } else {
                // One character that is more tokens than the budget: take it whole.
                end = start + unit[start..].chars().next().map_or(1, char::len_utf8);
                count = tok.count(&unit[start..end]);
            }
        }
        pieces.push((a + start, a + end, count));
        start = end;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn text_cannot_forge_ids() {
        let html = concat!(
            "<div node=\"1\"><!-- <p node=\"99\"> --><iframe node=\"2\"><a node=\"98\"></iframe>",
            "<script node=\"3\">x = '<b node=\"97\">'</script><p node=\"4\">ok</p></div>"
        );
        assert_eq!(ids_in(html, ChunkKind::Dom), vec![1, 2, 3, 4]);
        // Markup a parser skips whole: a doctype's or bogus comment's `<script>`, an escaped
        // script's `</script>`, end tags that are not one, comments closed as the parser
        // closes them.
        for (markup, ids) in [
            ("<!DOCTYPE x<script><p node=\"1\">", vec![1]),
            ("<?x <script>?><p node=\"1\">", vec![1]),
            ("</x <script>><p node=\"1\">", vec![1]),
            (
                "<script><!--<script></script><i node=\"9\"></script><p node=\"1\">",
                vec![1],
            ),
            (
                "<style>a</stylex><i node=\"9\"></style><p node=\"1\">",
                vec![1],
            ),
            ("<!--><p node=\"1\"><!---><p node=\"2\">", vec![1, 2]),
            ("<!-- x --!><p node=\"1\">", vec![1]),
            ("</><p node=\"1\">", vec![1]),
            ("<script.x><p node=\"1\"></script.x>", vec![1]),
        ] {
            assert_eq!(ids_in(markup, ChunkKind::Dom), ids, "{markup}");
        }
        for c in chunk(
            html,
            5,
            &Tokenizer::named("gpt2").unwrap(),
            ChunkKind::Dom,
            false,
        )
        .unwrap()
        {
            assert!(c.node_ids.iter().all(|id| *id < 90), "{:?}", c.node_ids);
        }
        // An attribute value cannot end a tag with a node id of its own.
        assert_eq!(
            ids_in(
                "<a title=\"x node=&quot;5&quot;\" node=\"6\">",
                ChunkKind::Dom
            ),
            vec![6]
        );
    }

    #[test]
    fn a_start_tag_longer_than_the_budget_keeps_its_id() {
        let long = "x".repeat(3000);
        let html = format!("<div node=\"1\"><a title=\"{long}\" node=\"7\">go</a></div>");
        let chunks = chunk(
            &html,
            20,
            &Tokenizer::named("gpt2").unwrap(),
            ChunkKind::Dom,
            false,
        )
        .unwrap();
        let holding: Vec<_> = chunks.iter().filter(|c| c.node_ids.contains(&7)).collect();
        assert_eq!(holding.len(), 1);
        assert!(holding[0].oversized && html[holding[0].start..].starts_with("<a title"));
    }

    #[test]
    fn splitting_mixed_scripts_is_fast() {
        let text: String = (0..5000)
            .map(|i| if i % 3 == 0 { "中文" } else { "ab " })
            .collect();
        let started = std::time::Instant::now();
        let chunks = chunk(
            &text,
            7,
            &Tokenizer::named("gpt2").unwrap(),
            ChunkKind::Text,
            false,
        )
        .unwrap();
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        let joined: String = chunks.iter().map(|c| &text[c.start..c.end]).collect();
        assert_eq!(joined, text);
    }

    /// Splitting an oversized unit reads O(n log budget) bytes through the tokenizer, whatever
    /// the script: emoji and CJK (many tokens per character, most token ends inside one) as
    /// much as ASCII. Counted, not timed.
    #[test]
    fn splitting_reads_each_byte_a_logarithmic_number_of_times() {
        let units = ["🙂", "👍🏽", "中文", "é", "ab ", "\u{301}x"];
        for tok in ["gpt2", "cl100k_base", "o200k_base"].map(|n| Tokenizer::named(n).unwrap()) {
            for budget in [1, 7, 512] {
                for unit in units {
                    let text = unit.repeat(20_000 / unit.len());
                    crate::tokenizer::COUNTED.with(|c| c.set(0));
                    let chunks = chunk(&text, budget, &tok, ChunkKind::Text, false).unwrap();
                    let read = crate::tokenizer::COUNTED.with(std::cell::Cell::get);
                    let joined: String = chunks.iter().map(|c| &text[c.start..c.end]).collect();
                    assert_eq!(joined, text);
                    assert!(chunks
                        .iter()
                        .all(|c| c.token_count <= budget
                            || text[c.start..c.end].chars().count() == 1));
                    let rounds = 4 + (usize::BITS - budget.leading_zeros()) as usize;
                    assert!(
                        read <= rounds * text.len(),
                        "{} {unit:?} budget {budget}: read {read} bytes of {} ({rounds} rounds allowed)",
                        tok.name(),
                        text.len()
                    );
                }
            }
        }
    }

    fn gpt2() -> Tokenizer {
        Tokenizer::named("gpt2").unwrap()
    }

    #[test]
    fn lossless_within_budget_at_boundaries() {
        let html: String = (0..200).fold(String::new(), |mut s, i| {
            let _ = write!(s, "<div node=\"{i}\"><a href=\"/x{i}\">item {i}</a></div>");
            s
        });
        for from_end in [false, true] {
            let chunks = chunk(&html, 50, &gpt2(), ChunkKind::Dom, from_end).unwrap();
            let joined: String = chunks.iter().map(|c| &html[c.start..c.end]).collect();
            assert_eq!(joined, html);
            for c in &chunks {
                assert!(c.token_count <= 50);
                assert!(html[c.start..].starts_with("<div") || html[c.start..].starts_with("<a"));
            }
            let all: Vec<i64> = chunks.iter().flat_map(|c| c.node_ids.clone()).collect();
            assert_eq!(all.len(), 200);
        }
    }

    #[test]
    fn oversized_units_are_split_and_flagged() {
        let text = format!("short line\n{}\nend\n", "word ".repeat(500));
        let chunks = chunk(&text, 40, &gpt2(), ChunkKind::Text, false).unwrap();
        let joined: String = chunks.iter().map(|c| &text[c.start..c.end]).collect();
        assert_eq!(joined, text);
        assert!(chunks.iter().any(|c| c.oversized));
        assert!(chunks.iter().all(|c| c.token_count <= 40));
    }

    /// A chunk's ids, taken from the text's start tags found once, are those its own text
    /// names: on generated markup with comments, raw text, tags cut short and forged ids.
    #[test]
    fn chunk_ids_are_those_its_text_names() {
        let atoms = [
            "<div node=\"1\">",
            "<a href=\"/x\" node=\"2\">",
            "text ",
            "</div>",
            "<!-- <p node=\"9\"> -->",
            "<!--",
            "-->",
            "<script node=\"3\">",
            "</script>",
            "<textarea node=\"4\">",
            "</textarea>",
            "<title>",
            "</title >",
            "<b node=\"5\"",
            ">",
            "<",
            "<plaintext node=\"6\">",
            "é中",
            "\n",
        ];
        let mut x = 0x1d5_u64;
        let tok = gpt2();
        for _ in 0..3000 {
            let mut text = String::new();
            crate::tokenizer::tests::next_random(&mut x);
            for _ in 0..x % 60 {
                crate::tokenizer::tests::next_random(&mut x);
                text.push_str(atoms[usize::try_from(x % atoms.len() as u64).unwrap()]);
            }
            for budget in [3, 12, 40] {
                for from_end in [false, true] {
                    for c in chunk(&text, budget, &tok, ChunkKind::Dom, from_end).unwrap() {
                        if !c.oversized {
                            assert_eq!(
                                c.node_ids,
                                ids_in(&text[c.start..c.end], ChunkKind::Dom),
                                "{text:?} {budget}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn text_ids() {
        assert_eq!(
            ids_in("link [12] 'a'\nbutton [-3] x [y] [7", ChunkKind::Text),
            vec![12, -3]
        );
    }
}
