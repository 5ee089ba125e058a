//! tiktoken's pre-tokenizers written out by hand: where the next piece ends, found by
//! looking at characters' classes instead of running a regex. On HTML the regex engine's
//! per-match set-up was most of the cost of counting tokens (a piece is 3–4 bytes).
//!
//! Each function follows its pattern's alternatives in order, as a leftmost-first regex
//! does, and applies tiktoken's one look-ahead (`\s+(?!\S)`: a whitespace run that is not
//! the text's end and not a line break's leaves its last character to the next piece). The
//! patterns themselves are kept in the tests, which compare every split with the `regex`
//! crate's on generated and corpus text and every character's class with the crate's
//! Unicode tables, so a Unicode update on either side fails loudly.

/// Character classes as bits: a character has at most one of the category bits.
const UPPER: u8 = 1; // Lu, Lt
const LOWER: u8 = 2; // Ll
const OTHER_LETTER: u8 = 4; // Lm, Lo
const MARK: u8 = 8; // Mn, Mc, Me
const NUMBER: u8 = 16; // Nd, Nl, No
const SPACE: u8 = 32; // White_Space (`\s`)
const BREAK: u8 = 64; // \r, \n (also SPACE)

const LETTER: u8 = UPPER | LOWER | OTHER_LETTER;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const CASED_HEAD: u8 = UPPER | OTHER_LETTER | MARK;
const CASED_TAIL: u8 = LOWER | OTHER_LETTER | MARK;

pub(super) fn class(c: char) -> u8 {
    if c.is_ascii() {
        return ASCII[c as usize];
    }
    let ranges = unicode_classes();
    let i = ranges.partition_point(|&(_, end, _)| end < c as u32);
    match ranges.get(i) {
        Some(&(start, _, k)) if start <= c as u32 => k,
        _ => 0,
    }
}

/// Whether `c` is whitespace as the patterns' `\s` means it.
pub(super) fn is_space(c: char) -> bool {
    class(c) & SPACE != 0
}

/// Each class bit's characters as the pre-tokenizers' patterns name them.
const CLASS_PATTERNS: [(&str, u8); 6] = [
    (r"[\p{Lu}\p{Lt}]", UPPER),
    (r"\p{Ll}", LOWER),
    (r"[\p{Lm}\p{Lo}]", OTHER_LETTER),
    (r"\p{M}", MARK),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
];

/// Non-ASCII characters' classes as sorted, disjoint `(first, last, class)` ranges, read from
/// the tables of the `regex` crate's own parser: the Unicode version tiktoken-rs' patterns
/// see (crates of Unicode tables lag or lead it: U+0295 is Lo in one, Ll in the other).
fn unicode_classes() -> &'static [(u32, u32, u8)] {
    static RANGES: std::sync::OnceLock<Vec<(u32, u32, u8)>> = std::sync::OnceLock::new();
    RANGES.get_or_init(|| {
        let mut ranges = Vec::new();
        for (pattern, bit) in CLASS_PATTERNS {
            let hir = regex_syntax::Parser::new()
                .parse(pattern)
                .expect("a valid Unicode class");
            if let regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(set)) =
                hir.kind()
            {
                for r in set.ranges() {
                    let start = u32::from(r.start()).max(0x80);
                    if start <= u32::from(r.end()) {
                        ranges.push((start, u32::from(r.end()), bit));
                    }
                }
            }
        }
        // The categories are disjoint (and White_Space holds no letter, mark or number), so
        // sorting by start leaves disjoint ranges.
        ranges.sort_unstable();
        debug_assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0));
        ranges
    })
}

const ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        t[i] = if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_digit() {
            NUMBER
        } else if b == b'\r' || b == b'\n' {
            SPACE | BREAK
        } else if matches!(b, b'\t' | 0x0b | 0x0c | b' ') {
            SPACE
        } else {
            0
        };
        i += 1;
    }
    t
};

/// The character at byte `i` and its class, or `None` at the end. Inlined for ASCII (most of
/// what it reads on the corpus, in every pre-tokenizer's hot loop); the rest is a call.
#[inline]
fn at(text: &str, i: usize) -> Option<(char, u8, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b < 0x80 {
        return Some((b as char, ASCII[b as usize], 1));
    }
    non_ascii_at(text, i)
}

#[inline(never)]
fn non_ascii_at(text: &str, i: usize) -> Option<(char, u8, usize)> {
    let c = text[i..].chars().next()?;
    Some((c, class(c), c.len_utf8()))
}

/// End of the run of characters whose class meets `mask`, from `i`.
#[inline]
fn run(text: &str, i: usize, mask: u8) -> usize {
    run_while(text, i, |k| k & mask != 0)
}

/// End of the run of characters of none of `mask`'s classes, from `i` (`[^\s\p{L}\p{N}]+`).
#[inline]
fn run_not(text: &str, i: usize, mask: u8) -> usize {
    run_while(text, i, |k| k & mask == 0)
}

/// End of the run of characters whose class `keep` accepts, from `i`; ASCII read byte by
/// byte without decoding.
#[inline]
fn run_while(text: &str, mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    let b = text.as_bytes();
    while i < b.len() {
        if b[i] < 0x80 {
            if !keep(ASCII[b[i] as usize]) {
                break;
            }
            i += 1;
        } else {
            match non_ascii_at(text, i) {
                Some((_, k, n)) if keep(k) => i += n,
                _ => break,
            }
        }
    }
    i
}

/// End of the run of the ASCII bytes in `set`, from `i` (`[\r\n]*`, `[\r\n/]*`).
fn run_of(text: &str, mut i: usize, set: &[u8]) -> usize {
    while text.as_bytes().get(i).is_some_and(|b| set.contains(b)) {
        i += 1;
    }
    i
}

/// A contraction's letters after an apostrophe at `i - 1`: r50k's case-sensitive
/// `(?:[sdmt]|ll|ve|re)`, or (`fold`) the case-insensitive one of cl100k and o200k, where
/// `s` also matches U+017F (long s), as Unicode case folding has it.
fn contraction(text: &str, i: usize, fold: bool) -> Option<usize> {
    let (c, _, n) = at(text, i)?;
    let c = if fold {
        if c == '\u{17f}' {
            's'
        } else {
            c.to_ascii_lowercase()
        }
    } else {
        c
    };
    match c {
        's' | 'd' | 'm' | 't' => Some(i + n),
        'l' | 'v' | 'r' => {
            let second = if c == 'l' { 'l' } else { 'e' }; // ll, ve, re
            let (d, _, m) = at(text, i + n)?;
            let d = if fold { d.to_ascii_lowercase() } else { d };
            (d == second).then_some(i + n + m)
        }
        _ => None,
    }
}

/// A whitespace piece `start..end` (a match of `\s+`, `\s+$` or `\s*[\r\n]`), shortened as
/// `\s+(?!\S)` would: unless it ends the text or (`breaks`) a line, a run of more than one
/// character leaves its last one.
fn space_piece(text: &str, start: usize, end: usize, breaks: bool) -> usize {
    if end >= text.len() || (breaks && matches!(text.as_bytes()[end - 1], b'\r' | b'\n')) {
        return end;
    }
    match text[start..end].char_indices().next_back() {
        Some((last, _)) if last > 0 => start + last,
        _ => end,
    }
}

/// cl100k's `\s+$|\s*[\r\n]|\s+` and (without `to_end`) o200k's `\s*[\r\n]+|\s+`, from a
/// whitespace character at `start`. `\s*[\r\n]` and `\s*[\r\n]+` end at the same place:
/// after the run's last line break, which nothing but other whitespace follows in the run.
fn space_with_breaks(text: &str, start: usize, to_end: bool) -> usize {
    let end = run(text, start, SPACE);
    if to_end && end == text.len() {
        return end;
    }
    let last_break = text.as_bytes()[start..end]
        .iter()
        .rposition(|&b| b == b'\r' || b == b'\n');
    match last_break {
        Some(j) => start + j + 1,
        None => space_piece(text, start, end, true),
    }
}

/// r50k (GPT-2): `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
pub(super) fn r50k(text: &str, pos: usize) -> usize {
    let Some((c, k, n)) = at(text, pos) else {
        return pos;
    };
    if c == '\'' {
        if let Some(end) = contraction(text, pos + n, false) {
            return end;
        }
    }
    // ` ?X+`: the space joins a run of letters, numbers or other symbols after it.
    let (from, k) = match at(text, pos + n) {
        Some((_, next, _)) if c == ' ' && next & SPACE == 0 => (pos + n, next),
        _ => (pos, k),
    };
    if k & LETTER != 0 {
        run(text, from, LETTER)
    } else if k & NUMBER != 0 {
        run(text, from, NUMBER)
    } else if k & SPACE == 0 {
        run_not(text, from, SPACE | LETTER | NUMBER)
    } else {
        space_piece(text, pos, run(text, pos, SPACE), false)
    }
}

/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
/// ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s+`.
pub(super) fn cl100k(text: &str, pos: usize) -> usize {
    let Some((c, k, n)) = at(text, pos) else {
        return pos;
    };
    if c == '\'' {
        if let Some(end) = contraction(text, pos + n, true) {
            return end;
        }
    }
    if k & LETTER != 0 {
        return run(text, pos, LETTER);
    }
    let next = at(text, pos + n).map_or(0, |(_, next, _)| next);
    if k & (BREAK | NUMBER) == 0 && next & LETTER != 0 {
        return run(text, pos + n, LETTER);
    }
    if k & NUMBER != 0 {
        return numbers(text, pos);
    }
    symbols(text, pos, c, k, n, next, b"\r\n").unwrap_or_else(|| space_with_breaks(text, pos, true))
}

/// `\p{N}{1,3}`.
fn numbers(text: &str, pos: usize) -> usize {
    let mut end = pos;
    for _ in 0..3 {
        match at(text, end) {
            Some((_, k, n)) if k & NUMBER != 0 => end += n,
            _ => break,
        }
    }
    end
}

/// ` ?[^\s\p{L}\p{N}]+` followed by any of `trail` (`[\r\n]*`, `[\r\n/]*`).
fn symbols(
    text: &str,
    pos: usize,
    c: char,
    k: u8,
    n: usize,
    next: u8,
    trail: &[u8],
) -> Option<usize> {
    let from = if c == ' ' && next & (SPACE | LETTER | NUMBER) == 0 && pos + n < text.len() {
        pos + n
    } else if k & (SPACE | LETTER | NUMBER) == 0 {
        pos
    } else {
        return None;
    };
    Some(run_of(
        text,
        run_not(text, from, SPACE | LETTER | NUMBER),
        trail,
    ))
}

/// o200k: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+C?|
/// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*C?|\p{N}{1,3}|
/// ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`, C being `(?i:'s|'t|'re|'ve|'m|'ll|'d)`.
pub(super) fn o200k(text: &str, pos: usize) -> usize {
    let Some((c, k, n)) = at(text, pos) else {
        return pos;
    };
    // The optional first character: anything but a line break, a letter or a number.
    let prefixed = k & (BREAK | LETTER | NUMBER) == 0;
    let first = if prefixed {
        cased_word(text, pos + n).or_else(|| cased_word(text, pos))
    } else {
        cased_word(text, pos)
    };
    if let Some(end) = first {
        return end;
    }
    let next = at(text, pos + n).map_or(0, |(_, next, _)| next);
    if prefixed && next & CASED_HEAD != 0 {
        return capitals(text, pos + n);
    }
    if k & CASED_HEAD != 0 {
        return capitals(text, pos);
    }
    if k & NUMBER != 0 {
        return numbers(text, pos);
    }
    symbols(text, pos, c, k, n, next, b"\r\n/")
        .unwrap_or_else(|| space_with_breaks(text, pos, false))
}

/// `[A]*[B]+C?` from `i` (A = `CASED_HEAD`, B = `CASED_TAIL`, which share Lm, Lo and M): A*
/// takes all it can and gives back until B+ can start, so B+ is either the run after A's
/// (when a lowercase letter follows it) or the last shared character within A's run.
fn cased_word(text: &str, i: usize) -> Option<usize> {
    let head_end = run(text, i, CASED_HEAD);
    let tail_end = match at(text, head_end) {
        Some((_, k, _)) if k & CASED_TAIL != 0 => run(text, head_end, CASED_TAIL),
        _ => {
            // The last character of A's run that is also in B, as B+'s one character.
            let mut last = None;
            let mut j = i;
            while j < head_end {
                let (_, k, n) = at(text, j)?;
                if k & CASED_TAIL != 0 {
                    last = Some(j + n);
                }
                j += n;
            }
            last?
        }
    };
    Some(suffix(text, tail_end))
}

/// `[A]+[B]*C?` from `i`, whose character is in A.
fn capitals(text: &str, i: usize) -> usize {
    suffix(text, run(text, run(text, i, CASED_HEAD), CASED_TAIL))
}

/// o200k's optional `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`.
fn suffix(text: &str, i: usize) -> usize {
    if text.as_bytes().get(i) == Some(&b'\'') {
        if let Some(end) = contraction(text, i + 1, true) {
            return end;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::super::tests::next_random;
    use super::super::{Encoding, CL100K_SPLIT, O200K_SPLIT, R50K_SPLIT};
    use super::*;

    /// The regex split, with the look-ahead applied by hand: what tiktoken's pattern does
    /// (tested against tiktoken itself in the parent module).
    fn regex_split(enc: Encoding, text: &str) -> Vec<usize> {
        static COMPILED: std::sync::OnceLock<[regex::Regex; 3]> = std::sync::OnceLock::new();
        let compiled = COMPILED.get_or_init(|| {
            [R50K_SPLIT, CL100K_SPLIT, O200K_SPLIT].map(|p| regex::Regex::new(p).unwrap())
        });
        let (split, breaks) = match enc {
            Encoding::R50k => (&compiled[0], false),
            Encoding::Cl100k => (&compiled[1], true),
            Encoding::O200k => (&compiled[2], true),
        };
        let mut ends = Vec::new();
        let mut pos = 0;
        while let Some(m) = split.find_at(text, pos) {
            assert_eq!(m.start(), pos, "the pattern covers every character");
            let mut end = m.end();
            let piece = m.as_str();
            if end < text.len()
                && piece.chars().all(char::is_whitespace)
                && !(breaks && piece.ends_with(['\r', '\n']))
            {
                if let Some((last, _)) = piece.char_indices().next_back().filter(|&(i, _)| i > 0) {
                    end = m.start() + last;
                }
            }
            ends.push(end);
            pos = end;
        }
        ends
    }

    fn hand_split(enc: Encoding, text: &str) -> Vec<usize> {
        let f = match enc {
            Encoding::R50k => r50k,
            Encoding::Cl100k => cl100k,
            Encoding::O200k => o200k,
        };
        let mut ends = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            pos = f(text, pos);
            ends.push(pos);
        }
        ends
    }

    const ALL: [Encoding; 3] = [Encoding::R50k, Encoding::Cl100k, Encoding::O200k];

    /// Every Unicode scalar value's class is what the regex crate's tables say.
    #[test]
    fn classes_are_the_regex_crates() {
        let all: String = (0..=0x10_FFFF_u32).filter_map(char::from_u32).collect();
        let mut expected = rustc_hash::FxHashMap::<char, u8>::default();
        // The regex engine's matches (the table is read from its parser's ranges).
        for (pattern, bit) in CLASS_PATTERNS.into_iter().chain([(r"[\r\n]", BREAK)]) {
            for m in regex::Regex::new(pattern).unwrap().find_iter(&all) {
                for c in m.as_str().chars() {
                    *expected.entry(c).or_default() |= bit;
                }
            }
        }
        for c in all.chars() {
            let want = expected.get(&c).copied().unwrap_or(0);
            assert_eq!(class(c), want, "U+{:04X}", c as u32);
        }
    }

    /// Text made of the pieces' hard cases: every class next to every other, contractions
    /// in every case (and U+017F, which folds to `s`), marks after capitals and lowercase,
    /// whitespace runs of every kind before letters, digits, symbols and line breaks.
    fn generated(seed: u64, count: usize) -> Vec<String> {
        let atoms = [
            " ", "  ", "\t", "\n", "\r", "\r\n", "\u{a0}", "\u{3000}", "\u{85}", "\u{2028}",
            "\u{b}", "a", "z", "Q", "HELLO", "Hello", "hELLO", "ǅ", "ʰ", "中", "\u{301}",
            "\u{20dd}", "ा", "1", "123456", "٣", "Ⅻ", "½", "'", "'s", "'S", "'ſ", "'ll", "'LL",
            "'Ve", "'re", "'d", "'m", "'t", "'x", "\"", "<", ">", "</", "/", "=\"", ".", "!?",
            "🙂", "€", "_", "-", "\u{200d}", "\u{fe0f}", "\u{0}",
        ];
        let mut x = seed | 1;
        (0..count)
            .map(|_| {
                let mut t = String::new();
                next_random(&mut x);
                for _ in 0..(x % 40) {
                    next_random(&mut x);
                    t.push_str(atoms[usize::try_from(x % atoms.len() as u64).unwrap()]);
                }
                t
            })
            .collect()
    }

    #[test]
    fn hand_splits_are_the_patterns_on_generated_text() {
        for enc in ALL {
            for text in generated(0x5eed ^ enc as u64, 20_000) {
                assert_eq!(
                    hand_split(enc, &text),
                    regex_split(enc, &text),
                    "{enc:?} {text:?}"
                );
            }
        }
    }

    #[test]
    fn hand_splits_are_the_patterns_on_every_corpus_page() {
        use std::io::Read;
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut pages = 0;
        for entry in std::fs::read_dir(&dir).expect("tests/corpus") {
            let page = entry.unwrap().path();
            for name in ["source.html.gz", "dom.html.gz"] {
                let Ok(file) = std::fs::File::open(page.join(name)) else {
                    continue;
                };
                let mut html = Vec::new();
                flate2::read::GzDecoder::new(file)
                    .read_to_end(&mut html)
                    .unwrap();
                let text = String::from_utf8_lossy(&html);
                for enc in ALL {
                    assert!(
                        hand_split(enc, &text) == regex_split(enc, &text),
                        "{enc:?} {}",
                        page.join(name).display()
                    );
                }
                pages += 1;
            }
        }
        assert!(pages >= 100, "{pages} corpus files");
    }
}
