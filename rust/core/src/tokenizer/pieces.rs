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

/// r50k's pieces of the whole of `text`, in order: `piece(start, end)` for each; the pieces
/// [`r50k`] gives, found 64 bytes at a time where the text is ASCII.
///
/// In ASCII, whether a piece starts at byte `q` depends only on bytes `q - 4 ..= q + 1`, so
/// a block's piece starts are a function of its bytes and five around it, computed for all 64
/// at once from the bytes' classes as bit masks — without the mispredicted branch per piece
/// that choosing an alternative costs (half of counting's time on HTML went to splitting).
/// With `S` whitespace, `X` any other class (letters, digits, other symbols), a piece starts:
/// where a whitespace run starts; at a run's last whitespace character when something else
/// follows it (`\s+(?!\S)` leaves it to the next piece); where a run of letters, digits or
/// other symbols starts, unless a space comes before it (` ?X+` joins that space); and a
/// contraction (`'s`, `'ll`, ...) after an apostrophe that starts a piece is one piece, the
/// letters after it another. A block near a non-ASCII byte is split by [`r50k`].
pub(super) fn r50k_pieces(text: &str, mut piece: impl FnMut(usize, usize)) {
    let b = text.as_bytes();
    let mut start = 0; // the piece being read starts here; none starts in (start, block)
    let mut prev = BlockClasses::default();
    let mut cur = BlockClasses::of(b, 0);
    let mut block = 0;
    while block < b.len() {
        let next = BlockClasses::of(b, block + 64);
        if start >= block + 64 {
            // Read by `r50k` past this block already.
        } else if cur.high == 0 && prev.high >> 60 == 0 && next.high & 1 == 0 {
            let mut starts = r50k_starts(&prev, &cur, &next);
            // Contractions after apostrophes that start pieces, here or in the last 3 bytes
            // before the block.
            let mut quotes = u128::from(prev.quote >> 61) | u128::from(cur.quote) << 3;
            while quotes != 0 {
                let at = block + quotes.trailing_zeros() as usize - 3;
                quotes &= quotes - 1;
                if let Some(end) = contraction_at(text, at) {
                    // `at + 1` was a letter run's start; `end` starts the rest of the run.
                    for (q, on) in [(at + 1, false), (end, true)] {
                        if (block..block + 64).contains(&q) {
                            let bit = 1u64 << (q - block);
                            starts = if on { starts | bit } else { starts & !bit };
                        }
                    }
                }
            }
            if block + 64 > b.len() {
                starts &= (1u64 << (b.len() - block)) - 1;
            }
            while starts != 0 {
                let q = block + starts.trailing_zeros() as usize;
                starts &= starts - 1;
                if q > start {
                    piece(start, q);
                    start = q;
                }
            }
        } else {
            while start < (block + 64).min(b.len()) {
                let end = r50k(text, start);
                piece(start, end);
                start = end;
            }
        }
        prev = cur;
        cur = next;
        block += 64;
    }
    if start < b.len() {
        piece(start, b.len());
    }
}

/// The end of the contraction (`'s`, `'d`, `'m`, `'t`, `'ll`, `'ve`, `'re`) that an
/// apostrophe at `at` begins, if it starts a piece: the text's first byte, or one after a
/// letter, a digit or whitespace other than a space (after a space, the space takes it; after
/// other symbols, their run does).
///
/// The byte before it is ASCII (a block's 4 bytes before it are).
fn contraction_at(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    if at > 0 {
        let before = ASCII.get(usize::from(b[at - 1])).copied();
        debug_assert!(before.is_some(), "an ASCII byte before the apostrophe");
        if before.unwrap_or(0) & (LETTER | NUMBER | SPACE) == 0 || b[at - 1] == b' ' {
            return None;
        }
    }
    contraction(text, at + 1, false)
}

/// One 64-byte block's bytes by class, a bit per byte (bytes past the text have none).
#[derive(Default, Clone, Copy)]
struct BlockClasses {
    letter: u64,
    digit: u64,
    space: u64,
    /// ` ` itself (which joins a run after it).
    blank: u64,
    /// Any other character: not a letter, digit or whitespace.
    other: u64,
    quote: u64,
    /// Bytes of non-ASCII characters.
    high: u64,
}

impl BlockClasses {
    /// The classes of the 64 bytes from `from` (fewer at the text's end), 8 at a time.
    fn of(b: &[u8], from: usize) -> BlockClasses {
        let mut classes = BlockClasses::default();
        let Some(rest) = b.get(from..).filter(|r| !r.is_empty()) else {
            return classes;
        };
        let n = rest.len().min(64);
        let mut padded = [0u8; 64];
        let bytes = if n == 64 {
            &rest[..64]
        } else {
            padded[..n].copy_from_slice(rest);
            &padded[..]
        };
        for (i, word) in bytes.chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let shift = 8 * i;
            // Bit 7 of each byte within `lo..=hi`, read with the bytes' high bits cleared so
            // that no byte's sum carries into the next: a non-ASCII byte gets the class of
            // the ASCII byte it becomes, never read (its block and neighbours go to `r50k`).
            let ascii = word & !HIGHS;
            let within = |x: u64, lo: u8, hi: u8| {
                (x + ONES * u64::from(0x80 - lo)) & !(x + ONES * u64::from(0x7f - hi)) & HIGHS
            };
            let blank = within(ascii, b' ', b' ');
            classes.letter |= packed(within(ascii | (ONES * 0x20), b'a', b'z')) << shift;
            classes.digit |= packed(within(ascii, b'0', b'9')) << shift;
            classes.blank |= packed(blank) << shift;
            classes.space |= packed(blank | within(ascii, b'\t', b'\r')) << shift;
            classes.quote |= packed(within(ascii, b'\'', b'\'')) << shift;
            classes.high |= packed(word & HIGHS) << shift;
        }
        let valid = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        classes.other = !(classes.letter | classes.digit | classes.space | classes.high) & valid;
        classes
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The top bits of a word's 8 bytes as 8 bits (byte `i`'s at bit `i`): the multiplication
/// moves each to its place in the top byte, no two products meeting.
#[inline]
fn packed(tops: u64) -> u64 {
    (tops >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The piece starts of `cur` (an ASCII block, as are the 4 bytes before it and the one after)
/// before contractions.
fn r50k_starts(prev: &BlockClasses, cur: &BlockClasses, next: &BlockClasses) -> u64 {
    let before = |m: fn(&BlockClasses) -> u64| m(cur) << 1 | m(prev) >> 63;
    let after = |m: fn(&BlockClasses) -> u64| m(cur) >> 1 | m(next) << 63;
    let solid = |c: &BlockClasses| c.letter | c.digit | c.other;
    let space_runs = cur.space & !before(|c| c.space);
    let last_spaces = cur.space & after(solid);
    let solid_runs = (cur.letter & !before(|c| c.letter))
        | (cur.digit & !before(|c| c.digit))
        | (cur.other & !before(|c| c.other));
    space_runs | last_spaces | (solid_runs & !before(|c| c.blank))
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

    /// [`r50k_pieces`]' ends, checked to cover the text piece after piece.
    fn block_split(text: &str) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut last = 0;
        r50k_pieces(text, |start, end| {
            assert!(start == last && end > start, "{start}..{end} after {last}");
            ends.push(end);
            last = end;
        });
        assert_eq!(last, text.len());
        ends
    }

    /// Long texts of mostly ASCII atoms (every class, contractions, whitespace runs, a
    /// non-ASCII character now and then), so that blocks of every kind meet at every offset.
    #[test]
    fn block_splits_are_the_hand_splits() {
        let atoms = [
            " ", "  ", "   ", "\t", "\n", "\r\n", "\u{b}", "\u{c}", "a", "Zq", "word", "1", "42",
            "'", "'s", "'d", "'m", "'t", "'ll", "'ve", "'re", "'l", "'v", "'r", "'x", "'S", "\"",
            "<", ">", "</", "=\"", ".", "!?", "_", "-", "\u{0}", "\u{1f}", "\u{7f}", "é", "\u{a0}",
            "中", "🙂", "\u{2028}", "\u{301}",
        ];
        let mut x = 0x5eed_b10c_u64;
        let mut texts = 0;
        for rare in [0, 1, 4, 16, 40] {
            for _ in 0..4000 {
                let mut t = String::new();
                next_random(&mut x);
                let len = x % 400;
                for _ in 0..len {
                    next_random(&mut x);
                    let k = usize::try_from(x % atoms.len() as u64).unwrap();
                    // Non-ASCII atoms (the last six) only one time in `rare`.
                    if k >= atoms.len() - 6 && (rare == 0 || (x >> 32) % rare != 0) {
                        continue;
                    }
                    t.push_str(atoms[k]);
                }
                assert_eq!(block_split(&t), hand_split(Encoding::R50k, &t), "{t:?}");
                texts += 1;
            }
        }
        assert_eq!(texts, 20_000);
        for t in [
            "", "a", "'s", " 's", "x's", "\n'll", "  ", "a  ", "'", "''s",
        ] {
            assert_eq!(block_split(t), hand_split(Encoding::R50k, t), "{t:?}");
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
                assert!(
                    block_split(&text) == hand_split(Encoding::R50k, &text),
                    "blocks {}",
                    page.join(name).display()
                );
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
