//! Offline BPE tokenizers. The vocabularies are compiled into the binary by tiktoken-rs,
//! so counting never touches the network.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use tiktoken_rs::CoreBPE;

/// The tokenizer budgets and counts use unless told otherwise: GPT-2's, as `AgentOccam`'s
/// Table 4 counts.
pub const DEFAULT_TOKENIZER: &str = "gpt2";

/// A tokenizer that cannot be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizerError {
    /// A name that is none of the embedded encodings.
    UnknownName(String),
    /// A `tokenizer.json` that does not load.
    Load { name: String, reason: String },
}

impl std::fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenizerError::UnknownName(name) => write!(
                f,
                "unknown tokenizer {name:?}; expected one of {}",
                Encoding::NAMES.join(", ")
            ),
            TokenizerError::Load { name, reason } => {
                write!(f, "cannot load tokenizer {name}: {reason}")
            }
        }
    }
}

impl std::error::Error for TokenizerError {}

/// A named tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-2's vocabulary (`r50k_base`), the one `AgentOccam`'s Table 4 counts with.
    R50k,
    Cl100k,
    O200k,
}

impl Encoding {
    /// Every embedded encoding by the names it answers to (`gpt2` is `r50k_base`): the
    /// registry the binding, CLI and docs read.
    pub const NAMES: [&'static str; 4] = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"];

    /// # Errors
    /// A name that is not one of [`Self::NAMES`].
    pub fn from_name(name: &str) -> Result<Encoding, TokenizerError> {
        match name {
            "gpt2" | "r50k_base" => Ok(Encoding::R50k),
            "cl100k_base" => Ok(Encoding::Cl100k),
            "o200k_base" => Ok(Encoding::O200k),
            other => Err(TokenizerError::UnknownName(other.to_owned())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::R50k => "r50k_base",
            Encoding::Cl100k => "cl100k_base",
            Encoding::O200k => "o200k_base",
        }
    }

    pub(crate) fn bpe(self) -> &'static CoreBPE {
        match self {
            Encoding::R50k => tiktoken_rs::r50k_base_singleton(),
            Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200k => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Token ids of `text`, special-token text treated as ordinary text.
    pub fn encode(self, text: &str) -> Vec<u32> {
        fast_encode(self, text)
    }

    pub fn count(self, text: &str) -> usize {
        fast_count(self, text)
    }

    /// Number of mergeable ranks (special tokens come after them).
    pub fn mergeable_ranks(self) -> u32 {
        match self {
            Encoding::R50k => 50_256,
            Encoding::Cl100k => 100_256,
            Encoding::O200k => 199_998,
        }
    }

    /// The encoding's `.tiktoken` file (`base64(token) rank` per line), rebuilt from the
    /// embedded ranks; byte-identical to the published file.
    pub fn bpe_file(self) -> Vec<u8> {
        let bpe = self.bpe();
        let mut out = Vec::with_capacity(self.mergeable_ranks() as usize * 16);
        for rank in 0..self.mergeable_ranks() {
            let bytes = bpe.decode_bytes(&[rank]).unwrap_or_default();
            out.extend_from_slice(BASE64_STANDARD.encode(&bytes).as_bytes());
            out.push(b' ');
            out.extend_from_slice(rank.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    }
}

mod pieces;

/// Each encoding's pre-tokenizer without its one look-ahead (`\s+(?!\S)`, which needs
/// fancy-regex's backtracking engine): the oracle [`pieces`] is tested against. Possessive
/// quantifiers in the originals change nothing here (no alternative can backtrack into
/// another), and `\s++$` is `\s+$`.
#[cfg(test)]
const R50K_SPLIT: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+";
#[cfg(test)]
const CL100K_SPLIT: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+";
#[cfg(test)]
const O200K_SPLIT: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+",
);

struct Splitter {
    /// Where the piece starting at a byte offset ends (see [`pieces`]).
    piece_end: fn(&str, usize) -> usize,
    /// Bytes of each mergeable token → its rank.
    ranks: FxHashMap<Vec<u8>, u32>,
    /// The same for tokens of at most 7 bytes, keyed by [`short_key`]: most pieces of
    /// HTML and text are such tokens, found without hashing and comparing a slice.
    short_ranks: FxHashMap<u64, u32>,
    /// The rank of every two bytes (`u32::MAX`: no token), indexed by the bytes: the pairs
    /// [`merge_short`] looks up first, without a hash probe.
    pair_ranks: Box<[u32]>,
}

/// A piece of at most 7 bytes as one number: its bytes, and its length in the top byte.
#[inline]
fn short_key(piece: &[u8]) -> Option<u64> {
    if piece.len() > 7 {
        return None;
    }
    Some(low_bytes(piece) | ((piece.len() as u64) << 56))
}

/// [`short_key`] of `text[start..start + len]` (`len` at most 7), from one 8-byte load and a
/// mask where the text has 8 bytes from `start`, without [`low_bytes`]' branches on the
/// length, which varies from one piece to the next (counting HTML: 4% faster).
#[inline]
fn short_key_at(text: &[u8], start: usize, len: usize) -> u64 {
    debug_assert!(len <= 7);
    match text.get(start..start + 8) {
        Some(word) => {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            (word & ((1u64 << (8 * len)) - 1)) | ((len as u64) << 56)
        }
        None => short_key(&text[start..start + len]).expect("at most 7 bytes"),
    }
}

/// The bytes of a slice of at most 8 bytes as a little-endian number, read by (possibly
/// overlapping) loads of its first and last bytes: copying a variable length into a buffer
/// cost a call and a stalled load per piece, a quarter of the per-piece lookup's time.
#[inline]
fn low_bytes(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let first = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let last = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        first | (last << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(b[0])
            | (u64::from(b[n / 2]) << (8 * (n / 2)))
            | (u64::from(b[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

fn splitter(enc: Encoding) -> &'static Splitter {
    static PARTS: [OnceLock<Splitter>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (slot, piece_end): (_, fn(&str, usize) -> usize) = match enc {
        Encoding::R50k => (&PARTS[0], pieces::r50k),
        Encoding::Cl100k => (&PARTS[1], pieces::cl100k),
        Encoding::O200k => (&PARTS[2], pieces::o200k),
    };
    slot.get_or_init(|| {
        let bpe = enc.bpe();
        let ranks: FxHashMap<Vec<u8>, u32> = (0..enc.mergeable_ranks())
            .filter_map(|r| bpe.decode_bytes(&[r]).ok().map(|b| (b, r)))
            .collect();
        let short_ranks = ranks
            .iter()
            .filter_map(|(bytes, &rank)| short_key(bytes).map(|key| (key, rank)))
            .collect();
        let mut pair_ranks = vec![u32::MAX; 1 << 16].into_boxed_slice();
        for (bytes, &rank) in &ranks {
            if let [a, b] = bytes[..] {
                pair_ranks[usize::from(a) << 8 | usize::from(b)] = rank;
            }
        }
        Splitter {
            piece_end,
            ranks,
            short_ranks,
            pair_ranks,
        }
    })
}

/// Where [`for_each_token_run`] puts each piece's tokens.
trait Sink {
    /// Whether it needs the ids (encoding) or only how many there are (counting).
    const IDS: bool;
    /// The ids of the piece (or of a part of it) that ends at `end`.
    fn ids(&mut self, end: usize, ids: &[u32]);
    /// How many tokens the piece that ends at `end` has (only when not `IDS`).
    fn count(&mut self, end: usize, n: usize);
}

struct Ids(Vec<u32>);

impl Sink for Ids {
    const IDS: bool = true;
    fn ids(&mut self, _: usize, ids: &[u32]) {
        self.0.extend_from_slice(ids);
    }
    fn count(&mut self, _: usize, _: usize) {
        unreachable!("an encoding sink is given ids");
    }
}

struct Count(usize);

impl Sink for Count {
    const IDS: bool = false;
    fn ids(&mut self, _: usize, ids: &[u32]) {
        self.0 += ids.len();
    }
    fn count(&mut self, _: usize, n: usize) {
        self.0 += n;
    }
}

/// tiktoken's encodings, identical ids (tested against tiktoken on the corpus and on
/// generated text), in time linear in the text. Pieces are split by [`pieces`]' hand-written
/// pre-tokenizers; pieces that are not one token are merged by [`byte_pair_encode`], cached
/// per call for pieces up to [`CACHED_PIECE`] bytes (a cache of ids kept by the thread across
/// calls measured slower on the corpus: most merged pieces are a page's own); a counting sink
/// gets short pieces' counts from the thread's [`FRONT`] instead, and longer ones' from a
/// per-call map of counts.
fn for_each_token_run<S: Sink>(enc: Encoding, text: &str, sink: &mut S) {
    let parts = splitter(enc);
    let mut merged = Merged::default();
    with_front(enc, |front| {
        for_each_piece(enc, text, |start, end| {
            piece_tokens(parts, front, &mut merged, text.as_bytes(), start, end, sink);
        });
    });
}

/// Each piece of `text` as `enc`'s pre-tokenizer cuts it, in order: `piece(start, end)`.
fn for_each_piece(enc: Encoding, text: &str, mut piece: impl FnMut(usize, usize)) {
    if enc == Encoding::R50k {
        return pieces::r50k_pieces(text, piece);
    }
    let piece_end = splitter(enc).piece_end;
    let mut pos = 0;
    while pos < text.len() {
        let end = piece_end(text, pos);
        debug_assert!(end > pos, "every character starts a piece");
        piece(pos, end);
        pos = end;
    }
}

/// Pieces of several tokens met in one call: their ids when encoding, their counts when
/// counting (pieces too long for [`Front::counts`]).
#[derive(Default)]
struct Merged<'t> {
    ids: FxHashMap<&'t [u8], Box<[u32]>>,
    counts: FxHashMap<&'t [u8], usize>,
}

/// The tokens of one piece, as the pre-tokenizer cut it, handed to `sink` with the piece's
/// `end`. A counting sink gets the piece's count from [`Front::short_counts`] or
/// [`Front::counts`] (up to 15 bytes) or `merged` (longer); an encoding sink gets a token
/// found in [`Front::ranks`] or the rank tables, or a merge's ids from `merged`.
fn piece_tokens<'t, S: Sink>(
    parts: &Splitter,
    front: &mut Front,
    merged: &mut Merged<'t>,
    text: &'t [u8],
    start: usize,
    end: usize,
    sink: &mut S,
) {
    let piece = &text[start..end];
    if !S::IDS {
        // Counting a short piece: one probe of the thread's counts, which hold short pieces
        // whether they are one token or several.
        if piece.len() <= 7 {
            let key = short_key_at(text, start, piece.len());
            let slot = &mut front.short_counts[front_slot(key)];
            if *slot & !(0xf << SHORT_COUNT_SHIFT) != key {
                *slot = key | ((piece_count(parts, piece) as u64) << SHORT_COUNT_SHIFT);
            }
            return sink.count(end, (*slot >> SHORT_COUNT_SHIFT) as usize);
        }
        if let Some(key) = counted_key(piece) {
            let slot = &mut front.counts[counted_slot(key)];
            if *slot & !(0xf << COUNT_SHIFT) != key {
                *slot = key | ((piece_count(parts, piece) as u128) << COUNT_SHIFT);
            }
            return sink.count(end, (*slot >> COUNT_SHIFT) as usize);
        }
        // A longer piece (an indentation, a long word): counted once per call.
        if piece.len() > CACHED_PIECE {
            return sink.count(end, piece_count(parts, piece));
        }
        if merged.counts.len() >= CACHE_ENTRIES {
            merged.counts.clear();
        }
        let n = *merged
            .counts
            .entry(piece)
            .or_insert_with(|| piece_count(parts, piece));
        return sink.count(end, n);
    }
    if let Some(key) = short_key(piece) {
        let slot = &mut front.ranks[front_slot(key)];
        if slot.0 == key {
            return sink.ids(end, &[slot.1]);
        }
        if let Some(&rank) = parts.short_ranks.get(&key) {
            *slot = (key, rank);
            return sink.ids(end, &[rank]);
        }
    } else if let Some(&rank) = parts.ranks.get(piece) {
        return sink.ids(end, &[rank]);
    }
    // A piece of several tokens.
    if let Some(ids) = merged.ids.get(piece) {
        sink.ids(end, ids);
    } else if piece.len() <= CACHED_PIECE {
        // Emptied when full: memory stays bounded on text where every word differs.
        if merged.ids.len() >= CACHE_ENTRIES {
            merged.ids.clear();
        }
        let mut ids = Vec::new();
        byte_pair_encode(piece, parts, &mut |run| ids.extend_from_slice(run));
        sink.ids(end, &ids);
        merged.ids.insert(piece, ids.into_boxed_slice());
    } else {
        byte_pair_encode(piece, parts, &mut |run| sink.ids(end, run));
    }
}

/// How many tokens a piece has, from the rank tables.
fn piece_count(parts: &Splitter, piece: &[u8]) -> usize {
    if rank_of(parts, piece) != u32::MAX {
        return 1;
    }
    if piece.len() < SHORT_MERGE {
        return merge_short(parts, piece, &mut [0; SHORT_MERGE + 1]);
    }
    let mut n = 0;
    byte_pair_encode(piece, parts, &mut |run| n += run.len());
    n
}

/// The rank of a token's bytes, or `u32::MAX` for bytes that are no token.
#[inline]
fn rank_of(parts: &Splitter, bytes: &[u8]) -> u32 {
    if let [a, b] = *bytes {
        return parts.pair_ranks[usize::from(a) << 8 | usize::from(b)];
    }
    match short_key(bytes) {
        Some(key) => parts.short_ranks.get(&key),
        None => parts.ranks.get(bytes),
    }
    .copied()
    .unwrap_or(u32::MAX)
}

/// Pieces shorter than this are merged by [`merge_short`].
const SHORT_MERGE: usize = 128;

/// Byte-pair merging of a piece of 2 to `SHORT_MERGE - 1` bytes, as tiktoken defines it:
/// repeatedly join the adjacent pair of parts whose joined bytes have the lowest rank (the
/// leftmost on a tie) until no pair is a token. Works in place on the stack, without the
/// allocations and slice-keyed probes of tiktoken-rs' routine: `starts[..=n]` receives the
/// parts' starts and the piece's end; returns the number of parts `n`.
fn merge_short(parts: &Splitter, piece: &[u8], starts: &mut [usize; SHORT_MERGE + 1]) -> usize {
    let len = piece.len();
    debug_assert!((2..SHORT_MERGE).contains(&len));
    // pair[i]: the rank of parts i and i + 1 joined.
    let mut pair = [u32::MAX; SHORT_MERGE];
    for (i, start) in starts.iter_mut().enumerate().take(len + 1) {
        *start = i;
    }
    for i in 0..len - 1 {
        pair[i] = rank_of(parts, &piece[i..i + 2]);
    }
    let mut n = len;
    loop {
        let (mut best, mut at) = (u32::MAX, 0);
        for (i, &rank) in pair[..n - 1].iter().enumerate() {
            if rank < best {
                (best, at) = (rank, i);
            }
        }
        if best == u32::MAX {
            return n;
        }
        // Part `at + 1` joins part `at`.
        starts.copy_within(at + 2..=n, at + 1);
        if at + 2 < n {
            pair.copy_within(at + 2..n - 1, at + 1);
        }
        n -= 1;
        if at + 1 < n {
            pair[at] = rank_of(parts, &piece[starts[at]..starts[at + 2]]);
        } else {
            pair[at] = u32::MAX;
        }
        if at > 0 {
            pair[at - 1] = rank_of(parts, &piece[starts[at - 1]..starts[at + 1]]);
        }
    }
}

/// Slots of each of [`FRONT`]'s tables as a power of two.
const FRONT_BITS: u32 = 15;

/// One thread's memory of the pieces it met last, per encoding: small direct-mapped tables
/// (one entry per slot, key 0 being none) in front of the large rank table, whose probes miss
/// the CPU's caches (on the corpus they were a tenth of counting's time), and of the merging
/// of pieces of several tokens (a quarter).
struct Front {
    /// Tokens of up to 7 bytes: ([`short_key`], rank).
    ranks: Vec<(u64, u32)>,
    /// Pieces of up to 7 bytes, for counting: [`short_key`] with the piece's count in its
    /// top four bits, 8 bytes an entry, so that the table stays in the core's cache.
    short_counts: Vec<u64>,
    /// Pieces of 8 to 15 bytes, for counting: [`counted_key`] with the piece's count in its
    /// top four bits.
    counts: Vec<u128>,
}

impl Default for Front {
    fn default() -> Self {
        Front {
            ranks: vec![(0, 0); 1 << FRONT_BITS],
            short_counts: vec![0; 1 << FRONT_BITS],
            counts: vec![0; 1 << FRONT_BITS],
        }
    }
}

thread_local! {
    /// 1.25 MB per encoding a thread counts or encodes with, made on its first use.
    static FRONT: std::cell::RefCell<[Option<Front>; 3]> = std::cell::RefCell::default();
}

/// `f` with this thread's [`Front`] for `enc`.
fn with_front<R>(enc: Encoding, f: impl FnOnce(&mut Front) -> R) -> R {
    FRONT.with_borrow_mut(|fronts| f(fronts[enc as usize].get_or_insert_with(Front::default)))
}

#[inline]
fn front_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FRONT_BITS)) as usize
}

/// A piece of at most 15 bytes as one number: its bytes, and its length in the top byte's
/// low half (the high half is [`Front::counts`]' place for the piece's count).
#[inline]
fn counted_key(piece: &[u8]) -> Option<u128> {
    let n = piece.len();
    if n > 15 {
        return None;
    }
    let bytes = if n > 8 {
        let first = u64::from_le_bytes(piece[..8].try_into().expect("8 bytes"));
        let last = u64::from_le_bytes(piece[n - 8..].try_into().expect("8 bytes"));
        u128::from(first) | (u128::from(last) << (8 * (n - 8)))
    } else {
        u128::from(low_bytes(piece))
    };
    Some(bytes | ((n as u128) << 120))
}

/// Where a count sits in a [`Front::counts`] entry: a piece of at most 15 bytes has at most
/// 15 tokens, so its count fits in the key's top four bits.
const COUNT_SHIFT: u32 = 124;
/// The same in a [`Front::short_counts`] entry ([`short_key`] uses the low 59 bits).
const SHORT_COUNT_SHIFT: u32 = 60;

#[inline]
fn counted_slot(key: u128) -> usize {
    #[allow(clippy::cast_possible_truncation)] // folding the key's halves into one hash
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    front_slot(folded)
}

/// Each piece's end and the tokens up to it, for [`SpanCounter`].
#[derive(Default)]
struct Totals {
    ends: Vec<usize>,
    totals: Vec<usize>,
}

impl Totals {
    /// Room for the pieces of `bytes` of HTML or prose (3 to 4 bytes a piece): the vectors
    /// are filled once, without growing on the way.
    fn for_text(bytes: usize) -> Totals {
        let pieces = bytes / 3 + 16;
        Totals {
            ends: Vec::with_capacity(pieces),
            totals: Vec::with_capacity(pieces),
        }
    }
}

impl Sink for Totals {
    const IDS: bool = false;
    fn ids(&mut self, end: usize, ids: &[u32]) {
        self.count(end, ids.len());
    }
    fn count(&mut self, end: usize, n: usize) {
        let before = self.totals.last().copied().unwrap_or(0);
        if self.ends.last() == Some(&end) {
            // A long piece merged in windows: its parts add to one entry.
            *self.totals.last_mut().expect("an end has its total") += n;
        } else {
            self.ends.push(end);
            self.totals.push(before + n);
        }
    }
}

/// Bytes past a piece's end that the pre-tokenizers may look at to decide where it ends
/// (at most three characters: a contraction after a word, the character after a whitespace
/// run's last one).
const LOOK_PAST: usize = 16;

/// Token counts of any range of one text, exact (what counting the range on its own gives),
/// after tokenizing the text once: [`crate::chunk`] counts every unit and every chunk of a
/// page this way instead of tokenizing the page twice.
///
/// A range's own pieces are the text's pieces except near its ends: from its start the range
/// is split on its own until a cut falls where one of the text's does (from there on the
/// splits agree: where a piece ends depends only on what follows its start), and its last
/// pieces, within `LOOK_PAST` bytes of its end, are split on their own with the range's end as
/// the text's. The pieces between are counted from the text's running totals.
pub struct SpanCounter<'a> {
    text: &'a str,
    tok: &'a Tokenizer,
    /// The text's pieces (tiktoken encodings only).
    pieces: Totals,
    /// The index [`Self::first_end_from`] found last.
    hint: std::cell::Cell<usize>,
}

impl<'a> SpanCounter<'a> {
    fn new(tok: &'a Tokenizer, text: &'a str) -> Self {
        let mut pieces = Totals::default();
        if let Tokenizer::Tiktoken(enc) = tok {
            pieces = Totals::for_text(text.len());
            #[cfg(test)]
            COUNTED.with(|c| c.set(c.get() + text.len()));
            for_each_token_run(*enc, text, &mut pieces);
        }
        SpanCounter {
            text,
            tok,
            pieces,
            hint: std::cell::Cell::new(0),
        }
    }

    /// Tokens before the text's piece boundary `at` (0 or a piece's end), or `None` when no
    /// piece of the text ends there.
    fn total_at(&self, at: usize) -> Option<usize> {
        if at == 0 {
            return Some(0);
        }
        let i = self.first_end_from(at);
        (self.pieces.ends.get(i) == Some(&at)).then(|| self.pieces.totals[i])
    }

    /// The index of the text's first piece that ends at `at` or later (the number of pieces
    /// when none does), searched outward from the last answer: the chunker asks about ranges
    /// in order, each near the one before, where a binary search over the page's pieces cost
    /// a cache miss a step (a third of chunking's time beside tokenizing the page).
    fn first_end_from(&self, at: usize) -> usize {
        let ends = &self.pieces.ends;
        let n = ends.len();
        let hint = self.hint.get().min(n);
        // The answer lies in lo..=hi; gallop away from the hint to bound it.
        let (lo, hi) = if hint < n && ends[hint] < at {
            let (mut lo, mut step) = (hint + 1, 1);
            loop {
                let probe = hint + step;
                if probe >= n {
                    break (lo, n);
                }
                if ends[probe] >= at {
                    break (lo, probe);
                }
                lo = probe + 1;
                step *= 2;
            }
        } else {
            let (mut hi, mut step) = (hint, 1);
            loop {
                if step > hint {
                    break (0, hi);
                }
                let probe = hint - step;
                if ends[probe] < at {
                    break (probe + 1, hi);
                }
                hi = probe;
                step *= 2;
            }
        };
        let i = lo + ends[lo..hi].partition_point(|&e| e < at);
        self.hint.set(i);
        i
    }

    /// Tokens of `text[start..end]` counted on its own.
    ///
    /// # Panics
    /// A range that is not within the text on character boundaries.
    pub fn count(&self, start: usize, end: usize) -> usize {
        let Tokenizer::Tiktoken(enc) = self.tok else {
            return self.tok.count(&self.text[start..end]);
        };
        let parts = splitter(*enc);
        let range = &self.text[..end];
        let mut merged = Merged::default();
        let mut own = Count(0);
        with_front(*enc, |front| {
            // The range's own piece at `pos`, counted in `own`; where it ends.
            let mut own_piece = |pos: usize| {
                let to = (parts.piece_end)(range, pos);
                #[cfg(test)]
                COUNTED.with(|c| c.set(c.get() + to - pos));
                piece_tokens(
                    parts,
                    front,
                    &mut merged,
                    self.text.as_bytes(),
                    pos,
                    to,
                    &mut own,
                );
                to
            };
            let mut pos = start;
            let mut synced = None;
            while pos < end {
                if let Some(total) = self.total_at(pos) {
                    synced = Some(total);
                    break;
                }
                pos = own_piece(pos);
            }
            let mut between = 0;
            if let Some(before) = synced {
                // The text's pieces are the range's up to one that ends LOOK_PAST or more
                // before the range's end and not after its last non-whitespace character
                // (cl100k's `\s+$` looks at a whole whitespace run: the range's must end where
                // the text's does).
                let last_solid = range[pos..]
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !pieces::is_space(c))
                    .map_or(pos, |(i, _)| pos + i);
                let Totals { ends, totals } = &self.pieces;
                // The first piece that ends past min(end - LOOK_PAST, last_solid).
                let k = end
                    .checked_sub(LOOK_PAST)
                    .map_or(0, |far| self.first_end_from(far.min(last_solid) + 1));
                if k > 0 && ends[k - 1] > pos {
                    between = totals[k - 1] - before;
                    pos = ends[k - 1];
                }
            }
            while pos < end {
                pos = own_piece(pos);
            }
            own.0 + between
        })
    }
}

/// Pieces up to this length are cached, at most this many of them at once.
const CACHED_PIECE: usize = 1024;
const CACHE_ENTRIES: usize = 1 << 16;

fn fast_encode(enc: Encoding, text: &str) -> Vec<u32> {
    let mut sink = Ids(Vec::with_capacity(text.len() / 4));
    for_each_token_run(enc, text, &mut sink);
    sink.0
}

fn fast_count(enc: Encoding, text: &str) -> usize {
    let mut sink = Count(0);
    for_each_token_run(enc, text, &mut sink);
    sink.0
}

/// Pieces longer than this are merged a window at a time (see [`merge_in_windows`]).
const LONG_PIECE: usize = 256 * 1024;
/// The part of a window whose tokens are kept, and the look-ahead after it that the merge
/// sees but whose tokens are merged again with the next window.
const WINDOW: usize = 64 * 1024;
const LOOK_AHEAD: usize = 8 * 1024;

/// Byte-pair merging of one piece, as tiktoken does it: repeatedly join the adjacent pair
/// whose bytes have the lowest rank (the leftmost on a tie) until no pair is a token. Short
/// pieces go to tiktoken-rs's own routine; long ones (a run of thousands of spaces) use a
/// heap, O(n log n), where that routine is quadratic (tiktoken-rs does not export its own
/// heap version); very long ones (a page that is one 200 MB word) are merged in windows, so
/// that memory stays bounded whatever the piece's length.
fn byte_pair_encode(piece: &[u8], parts: &Splitter, emit: &mut dyn FnMut(&[u32])) {
    let ranks = &parts.ranks;
    if piece.len() == 1 {
        emit(&[ranks[piece]]);
    } else if piece.len() < SHORT_MERGE {
        let mut starts = [0; SHORT_MERGE + 1];
        let n = merge_short(parts, piece, &mut starts);
        let mut ids = [0; SHORT_MERGE];
        for (id, part) in ids.iter_mut().zip(starts[..=n].windows(2)) {
            *id = rank_of(parts, &piece[part[0]..part[1]]);
        }
        emit(&ids[..n]);
    } else if piece.len() > LONG_PIECE {
        merge_in_windows(piece, ranks, emit);
    } else {
        emit(&merge_with_heap(piece, ranks));
    }
}

/// A very long piece merged a window at a time: each window is merged with [`LOOK_AHEAD`]
/// more bytes after it, and the tokens that end within the window are kept (at least one);
/// the next window starts where the last kept token ends. A merge's outcome depends on the
/// bytes around it only as far as tokens reach (the longest token is 128 bytes for
/// `cl100k_base`, 256 for `o200k_base`), so the look-ahead — dozens of tokens long — leaves
/// the kept tokens as the whole piece's merge makes them; tests compare the two on long
/// pieces of every kind. Memory: O(`WINDOW`); time linear in the piece.
fn merge_in_windows(piece: &[u8], ranks: &FxHashMap<Vec<u8>, u32>, emit: &mut dyn FnMut(&[u32])) {
    let mut start = 0;
    let mut kept = Vec::new();
    while start < piece.len() {
        let end = (start + WINDOW + LOOK_AHEAD).min(piece.len());
        let parts = merge_parts(&piece[start..end], ranks);
        kept.clear();
        if end == piece.len() {
            kept.extend(parts.iter().map(|&(_, id)| id));
            emit(&kept);
            break;
        }
        let mut consumed = 0;
        for (k, &(part_end, id)) in parts.iter().enumerate() {
            if k > 0 && part_end > WINDOW {
                break;
            }
            consumed = part_end;
            kept.push(id);
        }
        emit(&kept);
        start += consumed;
    }
}

fn merge_with_heap(piece: &[u8], ranks: &FxHashMap<Vec<u8>, u32>) -> Vec<u32> {
    merge_parts(piece, ranks)
        .into_iter()
        .map(|(_, id)| id)
        .collect()
}

/// The heap merge of `piece` (at least two bytes): each token as (its end in `piece`, id).
fn merge_parts(piece: &[u8], ranks: &FxHashMap<Vec<u8>, u32>) -> Vec<(usize, u32)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    // Parts as a linked list over byte positions: part i spans start[i]..start[next[i]].
    let n = piece.len();
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let pair_rank = |i: usize, next: &[usize]| -> Option<u32> {
        let j = next[i];
        if j >= n {
            return None;
        }
        ranks.get(&piece[i..next[j]]).copied()
    };
    let mut heap: BinaryHeap<Reverse<(u32, usize, usize)>> = BinaryHeap::new();
    for i in 0..n {
        if let Some(r) = pair_rank(i, &next) {
            heap.push(Reverse((r, i, next[next[i]])));
        }
    }
    while let Some(Reverse((rank, i, end))) = heap.pop() {
        // Stale entries: a part merged away, or the pair's extent changed since.
        if !alive[i] || next[i] >= n || next[next[i]] != end {
            continue;
        }
        let j = next[i];
        alive[j] = false;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
        }
        debug_assert_eq!(ranks.get(&piece[i..next[i]]).copied(), Some(rank));
        if let Some(r) = pair_rank(i, &next) {
            heap.push(Reverse((r, i, next[next[i]])));
        }
        let p = prev[i];
        if p < n {
            if let Some(r) = pair_rank(p, &next) {
                heap.push(Reverse((r, p, next[next[p]])));
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        out.push((next[i], ranks[&piece[i..next[i]]]));
        i = next[i];
    }
    out
}

#[cfg(test)]
thread_local! {
    /// Bytes this thread's [`Tokenizer::count`] calls have read: tests bound the work of
    /// the passes that count (chunking) by it, as a property instead of a timing.
    pub(crate) static COUNTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Any tokenizer the core counts with: an embedded tiktoken encoding, or a Hugging Face
/// `tokenizer.json` (`ScribeAgent`'s Qwen tokenizer, for instance).
#[derive(Clone)]
pub enum Tokenizer {
    Tiktoken(Encoding),
    HuggingFace {
        name: String,
        inner: Arc<tokenizers::Tokenizer>,
    },
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokenizer({})", self.name())
    }
}

impl Tokenizer {
    /// `gpt2`/`r50k_base`, `cl100k_base` or `o200k_base`.
    ///
    /// # Errors
    /// A name that is none of the embedded encodings.
    pub fn named(name: &str) -> Result<Tokenizer, TokenizerError> {
        Encoding::from_name(name).map(Tokenizer::Tiktoken)
    }

    /// A Hugging Face `tokenizer.json` given as bytes.
    ///
    /// # Errors
    /// A `tokenizer.json` that does not load.
    pub fn from_json(name: &str, json: &[u8]) -> Result<Tokenizer, TokenizerError> {
        let inner = tokenizers::Tokenizer::from_bytes(json).map_err(|e| TokenizerError::Load {
            name: name.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Tokenizer::HuggingFace {
            name: name.to_owned(),
            inner: Arc::new(inner),
        })
    }

    pub fn name(&self) -> &str {
        match self {
            Tokenizer::Tiktoken(e) => e.name(),
            Tokenizer::HuggingFace { name, .. } => name,
        }
    }

    /// Token ids; no special tokens are added.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Tokenizer::Tiktoken(e) => e.encode(text),
            Tokenizer::HuggingFace { inner, .. } => inner
                .encode(text, false)
                .map(|enc| enc.get_ids().to_vec())
                .unwrap_or_default(),
        }
    }

    pub fn count(&self, text: &str) -> usize {
        #[cfg(test)]
        COUNTED.with(|c| c.set(c.get() + text.len()));
        match self {
            Tokenizer::Tiktoken(e) => e.count(text),
            Tokenizer::HuggingFace { .. } => self.encode(text).len(),
        }
    }

    /// Exact token counts of ranges of `text`, tokenizing it once.
    pub fn span_counter<'a>(&'a self, text: &'a str) -> SpanCounter<'a> {
        SpanCounter::new(self, text)
    }

    /// Byte offset where each token ends, for cutting text at token boundaries.
    pub fn token_ends(&self, text: &str) -> Vec<usize> {
        match self {
            Tokenizer::Tiktoken(e) => {
                let bpe = e.bpe();
                let mut end = 0;
                e.encode(text)
                    .into_iter()
                    .map(|t| {
                        end += bpe.decode_bytes(&[t]).map_or(0, |b| b.len());
                        end.min(text.len())
                    })
                    .collect()
            }
            Tokenizer::HuggingFace { inner, .. } => inner
                .encode(text, false)
                .map(|enc| {
                    enc.get_offsets()
                        .iter()
                        .map(|&(_, e)| e.min(text.len()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// xorshift64: the generated texts' randomness, the same on every run.
    pub(crate) fn next_random(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn short_keys_read_at_a_place_are_the_pieces_keys() {
        let text = b"abcdefghijklmnop\xff\x00q";
        for start in 0..text.len() {
            for len in 1..=7.min(text.len() - start) {
                assert_eq!(
                    Some(short_key_at(text, start, len)),
                    short_key(&text[start..start + len]),
                    "{start} {len}"
                );
            }
        }
    }

    #[test]
    fn gpt2_counts_known_strings() {
        // "hello world" is two GPT-2 tokens: 31373, 995.
        assert_eq!(Encoding::R50k.encode("hello world"), vec![31373, 995]);
        assert_eq!(Encoding::from_name("gpt2").unwrap(), Encoding::R50k);
        assert!(Encoding::from_name("bert").is_err());
        assert_eq!(Encoding::Cl100k.count(""), 0);
    }

    /// Texts that exercise every alternative of the three pre-tokenizers and long pieces
    /// (the heap merge): whitespace runs of every kind, line breaks, case changes, digits,
    /// contractions, punctuation before line breaks and slashes, scripts without spaces.
    fn generated(seed: u64, count: usize) -> Vec<String> {
        let atoms = [
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\u{a0}",
            "\u{3000}",
            "a",
            "Hello",
            "WORLD",
            "camelCase",
            "x1",
            "12345",
            "'s",
            "'LL",
            "don't",
            ".",
            "!!",
            "/",
            "...\n",
            "<div class=\"a\">",
            "中文",
            "テキスト",
            "🙂",
            "é",
            "\u{301}",
            "Ǆ",
            "ǅ",
            "\u{85}",
            "\u{2028}",
            "$",
            "--",
            "\n\n",
        ];
        let mut x = seed;
        (0..count)
            .map(|_| {
                let mut t = String::new();
                next_random(&mut x);
                let len = (x % 60) as usize;
                for _ in 0..len {
                    next_random(&mut x);
                    let atom = atoms[(x % atoms.len() as u64) as usize];
                    let times = if x % 11 == 0 {
                        1 + (x % 300) as usize
                    } else {
                        1
                    };
                    t.push_str(&atom.repeat(times));
                }
                t
            })
            .collect()
    }

    #[test]
    fn fast_encodings_are_tiktoken() {
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let bpe = enc.bpe();
            for text in generated(0x9e37_79b9_7f4a_7c15 ^ enc as u64, 400) {
                let ids = bpe.encode_ordinary(&text);
                assert_eq!(fast_encode(enc, &text), ids, "{enc:?} {text:?}");
                assert_eq!(fast_count(enc, &text), ids.len(), "{enc:?} {text:?}");
            }
        }
    }

    /// A range counted from the text's running totals is the range counted on its own: every
    /// range of generated text (whitespace runs before and after the ends, contractions and
    /// cased words cut anywhere), in every encoding.
    #[test]
    fn span_counts_are_the_ranges_own() {
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let tok = Tokenizer::Tiktoken(enc);
            // 30 texts of each encoding (~90k ranges in all): the suite's slowest test at 100.
            for text in generated(0x243f_6a88_85a3_08d3 ^ enc as u64, 30) {
                let cuts: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                let step = (cuts.len() / 25).max(1);
                let mut ranges = Vec::new();
                for (i, &a) in cuts.iter().enumerate().step_by(step) {
                    for &b in cuts[i..].iter().step_by(step) {
                        ranges.push((a, b));
                    }
                }
                // In order, backwards and in a shuffled order: the counter searches from where
                // its last answer was.
                let mut shuffled = ranges.clone();
                let mut x = text.len() as u64 | 1;
                for i in (1..shuffled.len()).rev() {
                    shuffled.swap(
                        i,
                        usize::try_from(next_random(&mut x) % (i as u64 + 1)).unwrap(),
                    );
                }
                let backwards = ranges.iter().rev().copied().collect();
                for order in [ranges, backwards, shuffled] {
                    let counter = tok.span_counter(&text);
                    for (a, b) in order {
                        assert_eq!(
                            counter.count(a, b),
                            enc.count(&text[a..b]),
                            "{enc:?} {:?}",
                            &text[a..b]
                        );
                    }
                }
            }
        }
    }

    /// Every range of short texts whose runs (whitespace with and without line breaks,
    /// capitals, modifier letters, digits, symbols) are longer than [`LOOK_PAST`], so that a
    /// range can end inside a run whose start decided a piece.
    #[test]
    fn span_counts_are_the_ranges_own_for_every_range_of_short_texts() {
        let atoms = [
            " ", "\n", "\t", "\u{3000}", "a", "A", "\u{2b0}", "1", "<", "'", "s", "\u{301}",
        ];
        let mut x: u64 = 0x1357_9bdf_2468_ace1;
        let mut next = || next_random(&mut x);
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let tok = Tokenizer::Tiktoken(enc);
            for _ in 0..300 {
                let mut text = String::new();
                for _ in 0..=(next() % 5) {
                    let atom = atoms[usize::try_from(next() % atoms.len() as u64).unwrap()];
                    let times = usize::try_from(1 + next() % 24).unwrap();
                    text.push_str(&atom.repeat(times));
                }
                let counter = tok.span_counter(&text);
                let cuts: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                for (i, &a) in cuts.iter().enumerate() {
                    for &b in &cuts[i..] {
                        assert_eq!(
                            counter.count(a, b),
                            enc.count(&text[a..b]),
                            "{enc:?} {:?} in {text:?}",
                            &text[a..b]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn short_merges_are_tiktoken_rs_own() {
        // Pieces from a small alphabet of bytes that merge a lot (letters, spaces, HTML's
        // punctuation, a two-byte character) and from any bytes, of every short length.
        let alphabet: Vec<u8> = "eatn <>=\"/-_.é\n".bytes().collect();
        let mut seed = 11;
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let parts = splitter(enc);
            for k in 0..6000 {
                let len = 2 + (next_random(&mut seed) % (SHORT_MERGE as u64 - 2)) as usize;
                let len = if k % 2 == 0 { len % 24 + 2 } else { len };
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        let r = next_random(&mut seed);
                        if k % 5 == 0 {
                            r as u8
                        } else {
                            alphabet[r as usize % alphabet.len()]
                        }
                    })
                    .collect();
                let want: Vec<u32> = tiktoken_rs::byte_pair_split(&piece, &parts.ranks)
                    .into_iter()
                    .map(|p| parts.ranks[p])
                    .collect();
                let mut got = Vec::new();
                byte_pair_encode(&piece, parts, &mut |ids| got.extend_from_slice(ids));
                assert_eq!(got, want, "{enc:?} {piece:?}");
                assert_eq!(piece_count(parts, &piece), want.len(), "{enc:?} {piece:?}");
            }
        }
    }

    #[test]
    fn keys_are_the_bytes_and_length_of_every_short_piece() {
        let mut seed = 7;
        for _ in 0..2000 {
            let len = (next_random(&mut seed) % 17) as usize;
            let piece: Vec<u8> = (0..len).map(|_| next_random(&mut seed) as u8).collect();
            let mut bytes = [0u8; 16];
            if len <= 7 {
                bytes[..len].copy_from_slice(&piece);
                bytes[7] = len as u8;
                let want = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                assert_eq!(short_key(&piece), Some(want), "{piece:?}");
            } else {
                assert_eq!(short_key(&piece), None);
            }
            let mut bytes = [0u8; 16];
            if len <= 15 {
                bytes[..len].copy_from_slice(&piece);
                bytes[15] = len as u8;
                assert_eq!(
                    counted_key(&piece),
                    Some(u128::from_le_bytes(bytes)),
                    "{piece:?}"
                );
            } else {
                assert_eq!(counted_key(&piece), None);
            }
        }
    }

    #[test]
    fn long_whitespace_runs_are_linear_and_do_not_panic() {
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            for run in [" ", "\t", " \n", "\u{3000}"] {
                let text = format!("a{}b", run.repeat(200_000));
                let ids = enc.encode(&text);
                let bpe = enc.bpe();
                assert_eq!(bpe.decode_bytes(&ids).unwrap(), text.as_bytes());
            }
        }
    }

    /// A piece longer than `LONG_PIECE` is merged in windows; the windows' tokens are the
    /// whole piece's, on long runs of every kind (one letter, two, a CJK character, an
    /// emoji's bytes, a word without spaces, random letters, digits and punctuation).
    #[test]
    fn very_long_pieces_merge_in_windows_as_a_whole() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut random = |alphabet: &[u8], len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    next_random(&mut x);
                    alphabet[(x % alphabet.len() as u64) as usize]
                })
                .collect()
        };
        let len = LONG_PIECE + 3 * WINDOW / 2;
        let mut pieces: Vec<Vec<u8>> = ["a", "ab", "中", "🙂", "Hello", "xYz", "  ", "=-"]
            .iter()
            .map(|u| u.repeat(len / u.len()).into_bytes())
            .collect();
        pieces.push(random(b"abcdefghijklmnopqrstuvwxyz", len));
        pieces.push(random(b"aaaaaaab", len));
        pieces.push(random(b"0123456789.,;:!?-_=+*/", len));
        for enc in [Encoding::R50k, Encoding::Cl100k, Encoding::O200k] {
            let ranks = &splitter(enc).ranks;
            for piece in &pieces {
                let mut windowed = Vec::new();
                merge_in_windows(piece, ranks, &mut |ids| windowed.extend_from_slice(ids));
                assert_eq!(
                    windowed,
                    merge_with_heap(piece, ranks),
                    "{enc:?} {:?}",
                    &piece[..8]
                );
                assert_eq!(enc.bpe().decode_bytes(&windowed).unwrap(), *piece);
            }
        }
    }

    #[test]
    fn fast_r50k_is_tiktoken() {
        let bpe = Encoding::R50k.bpe();
        let cases = [
            "",
            " ",
            "  ",
            "a  b",
            "a \n b",
            "x\n\n<div>",
            "  \t\n  end",
            "trailing   ",
            "\u{a0}\u{a0}x",
            "it's we'll 'S",
            "<a href=\"/x?y=1&z=2\">Hi</a>\n    <p>",
            "12345 6789x",
            "中文 テキスト 🙂🙂",
            "\r\n\r\n  \u{3000}q",
            "a\u{2028}b",
            "      ...!!!   ---",
            "\u{85}x \u{85} y",
        ];
        for c in cases {
            assert_eq!(
                fast_encode(Encoding::R50k, c),
                bpe.encode_ordinary(c),
                "{c:?}"
            );
        }
    }
}
