//! The HTML tokenizer in front of html5ever's tree builder: the tokens html5ever's own
//! tokenizer would give, found with byte searches instead of a state machine stepping one
//! character at a time (that stepping was about half of a parse).
//!
//! It follows the spec's tokenizer for what pages are made of — text, character references,
//! tags and their attributes, comments, `<!DOCTYPE html>`, the raw text of `<style>`,
//! `<title>`, `<textarea>` and kin, and of `<script>` with its escape states. What it leaves
//! to html5ever: a doctype of any other form, a bogus comment or a processing instruction
//! (each alone: it ends at the next `>`), and, with the rest of the document, anything after
//! a NUL, a CDATA section, `<plaintext>`, or the end of input inside a tag or a comment.
//! Its tokens need not be cut where html5ever cuts its text (the tree builder joins text),
//! but the document built from them is the same: `Dom::parse_reference` keeps html5ever's
//! tokenizer for the tests (every corpus page) and the `dom` fuzz target that check it.

use std::borrow::Cow;

use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use html5ever::interface::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::{RawKind, State};
use html5ever::tokenizer::{
    BufferQueue, Doctype, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::{ns, Attribute, LocalName, QualName};
use memchr::memmem;
use rustc_hash::FxHashSet;

/// Attributes of one tag past which duplicates are found with a set.
const MANY_ATTRIBUTES: usize = 16;

/// Tokenizes `text` into `sink`, then ends it (the end-of-file token and `sink.end()`).
pub(super) fn tokenize<S: TokenSink>(text: &str, sink: &S) {
    // The input stream's preprocessing: CR LF and a lone CR are LF, everywhere.
    let text = normalize_newlines(text);
    // html5ever drops a byte order mark at the very start.
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut tokens = Fast {
        src: &text,
        whole: StrTendril::from_slice(&text),
        pos: start,
        sink,
        chars: StrTendril::new(),
        last_start: None,
    };
    tokens.run();
}

fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = memchr::memchr(b'\r', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        if rest.starts_with('\n') {
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Hands html5ever's tokenizer the same sink, borrowed.
struct Borrowed<'a, S>(&'a S);

impl<S: TokenSink> TokenSink for Borrowed<'_, S> {
    type Handle = S::Handle;

    fn process_token(&self, token: Token, line: u64) -> TokenSinkResult<S::Handle> {
        self.0.process_token(token, line)
    }

    fn end(&self) {
        self.0.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.0
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// What the tokenizer does next.
enum Next {
    /// The data state.
    Data,
    /// A raw-text state a start tag put it in, left only by that tag's end tag.
    Raw(RawKind, LocalName),
    /// html5ever's tokenizer takes the rest of the input from `pos`, starting in `state`.
    Rest(State, Option<LocalName>),
    /// The input is over.
    Eof,
}

/// A character reference as the spec reads it, and whether html5ever reports a parse error
/// for it. Errors matter to the tree: html5ever gives them to the tree builder as tokens, and
/// any token after `<pre>`, `<listing>` or `<textarea>` ends the wait for a newline to drop.
enum CharRef {
    /// Not a reference: the `&` is text.
    Ampersand { error: bool },
    /// One or two characters, and where the input goes on.
    Chars {
        chars: [char; 2],
        len: usize,
        end: usize,
        error: bool,
    },
}

impl CharRef {
    /// Appends what the reference stands for (at the `&` at `at`) to `t`; where the input
    /// goes on.
    fn append_to(&self, t: &mut StrTendril, at: usize) -> usize {
        match *self {
            CharRef::Ampersand { .. } => {
                t.push_char('&');
                at + 1
            }
            CharRef::Chars {
                chars, len, end, ..
            } => {
                for &ch in &chars[..len] {
                    t.push_char(ch);
                }
                end
            }
        }
    }
}

const fn is_space(b: u8) -> bool {
    // A CR is a line break to the parser (the tokenizer reads normalized text; the chunker's
    // `raw_text_end` reads text as it is).
    matches!(b, b'\t' | b'\n' | b'\x0c' | b' ' | b'\r')
}

/// Whether `b` ends a tag's name (or an end tag's `</name` that closes raw text).
pub(crate) const fn ends_tag_name(b: u8) -> bool {
    is_space(b) || matches!(b, b'/' | b'>')
}

struct Fast<'a, S> {
    src: &'a str,
    /// `src` as a tendril, which text and values are views of.
    whole: StrTendril,
    pos: usize,
    sink: &'a S,
    /// Text not yet given to the sink: consecutive text goes as one token.
    chars: StrTendril,
    /// The name of the last start tag: the end tag that leaves a raw-text state.
    last_start: Option<LocalName>,
}

impl<'a, S: TokenSink> Fast<'a, S> {
    fn run(&mut self) {
        let mut next = Next::Data;
        loop {
            next = match next {
                Next::Data => self.data(),
                Next::Raw(kind, name) => self.raw(kind, name),
                Next::Rest(state, last_start_tag) => {
                    self.flush();
                    self.rest(state, last_start_tag);
                    return;
                }
                Next::Eof => {
                    self.flush();
                    self.give(Token::EOFToken);
                    self.sink.end();
                    return;
                }
            }
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn emit(&self, token: Token) -> TokenSinkResult<S::Handle> {
        self.sink.process_token(token, 1)
    }

    /// A token other than a tag: the tree builder answers it with `Continue` (html5ever's
    /// tokenizer asserts as much).
    fn give(&self, token: Token) {
        let _ = self.emit(token);
    }

    fn flush(&mut self) {
        if !self.chars.is_empty() {
            let chars = std::mem::take(&mut self.chars);
            self.give(Token::CharacterTokens(chars));
        }
    }

    fn text(&mut self, from: usize, to: usize) {
        let mut chars = std::mem::take(&mut self.chars);
        self.append(&mut chars, from, to);
        self.chars = chars;
    }

    /// Appends `src[from..to]` to `t`: to an empty `t`, as a view of the input (no copy),
    /// as html5ever's tokenizer does.
    fn append(&self, t: &mut StrTendril, from: usize, to: usize) {
        if from >= to {
            return;
        }
        if t.is_empty() {
            if let (Ok(offset), Ok(len)) = (u32::try_from(from), u32::try_from(to - from)) {
                *t = self.whole.subtendril(offset, len);
                return;
            }
        }
        t.push_slice(&self.src[from..to]);
    }

    /// html5ever's tokenizer on the rest of the input, ended.
    fn rest(&self, state: State, last_start_tag: Option<LocalName>) {
        let input = &self.src[self.pos..];
        html5ever_tokenize(self.sink, input, state, last_start_tag.as_ref(), true);
    }

    /// html5ever's tokenizer on one construct that ends at the `>` at `gt` (a doctype, a
    /// bogus comment), leaving it in the data state; or on the rest, with no such `>`.
    fn alone_until_gt(&mut self, gt: Option<usize>) -> Next {
        let Some(gt) = gt else {
            return Next::Rest(State::Data, None);
        };
        self.flush();
        let construct = &self.src[self.pos..=gt];
        if !html5ever_tokenize(self.sink, construct, State::Data, None, false) {
            // It stopped to look further ahead than the `>` (for `DOCTYPE` or `PUBLIC`)
            // before giving anything: its tokens come only at the `>`. It reads the rest.
            return Next::Rest(State::Data, None);
        }
        self.pos = gt + 1;
        Next::Data
    }

    fn data(&mut self) -> Next {
        loop {
            let b = self.bytes();
            let Some(off) = memchr::memchr3(b'<', b'&', b'\0', &b[self.pos..]) else {
                self.text(self.pos, b.len());
                self.pos = b.len();
                return Next::Eof;
            };
            let at = self.pos + off;
            self.text(self.pos, at);
            self.pos = at;
            match b[at] {
                b'\0' => return Next::Rest(State::Data, None),
                b'&' => self.char_ref_in_text(),
                _ => {
                    if let Some(next) = self.markup() {
                        return next;
                    }
                }
            }
        }
    }

    /// At a `&` in text: the reference's characters, or the `&`, become text.
    fn char_ref_in_text(&mut self) {
        let reference = self.char_ref_at(self.pos, false);
        if let CharRef::Ampersand { error: true } | CharRef::Chars { error: true, .. } = reference {
            self.parse_error();
        }
        self.pos = reference.append_to(&mut self.chars, self.pos);
    }

    /// A parse error where html5ever's tokenizer reports one in text (see [`CharRef`]).
    fn parse_error(&mut self) {
        self.flush();
        self.give(Token::ParseError(Cow::Borrowed("parse error")));
    }

    /// At a `<` in the data state. `None`: it was text, go on.
    fn markup(&mut self) -> Option<Next> {
        let b = self.bytes();
        let at = self.pos;
        let next = b.get(at + 1).copied();
        match next {
            Some(c) if c.is_ascii_alphabetic() => Some(self.tag(TagKind::StartTag)),
            Some(b'/') => match b.get(at + 2).copied() {
                Some(c) if c.is_ascii_alphabetic() => Some(self.tag(TagKind::EndTag)),
                // `</>` is dropped, with an error.
                Some(b'>') => {
                    self.parse_error();
                    self.pos = at + 3;
                    None
                }
                None => {
                    self.chars.push_slice("</");
                    self.pos = at + 2;
                    None
                }
                Some(_) => Some(self.alone_until_gt(find_byte(b'>', b, at))),
            },
            Some(b'!') => Some(self.markup_declaration()),
            Some(b'?') => Some(self.alone_until_gt(find_byte(b'>', b, at))),
            _ => {
                self.chars.push_char('<');
                self.pos = at + 1;
                None
            }
        }
    }

    /// At `<!`: a comment, `<!DOCTYPE html>`, or what html5ever reads.
    fn markup_declaration(&mut self) -> Next {
        let b = self.bytes();
        let at = self.pos;
        let after = &b[at + 2..];
        if after.starts_with(b"--") {
            return self.comment();
        }
        if after.starts_with(b"[CDATA[") {
            return Next::Rest(State::Data, None);
        }
        if let Some(end) = simple_doctype(after) {
            self.flush();
            self.give(Token::DoctypeToken(Doctype {
                name: Some(StrTendril::from_slice("html")),
                public_id: None,
                system_id: None,
                force_quirks: false,
            }));
            self.pos = at + 2 + end;
            return Next::Data;
        }
        self.alone_until_gt(find_byte(b'>', b, at))
    }

    /// At `<!--`. The comment is what lies before the first `-->` or `--!>`, unless it
    /// opens with `>` or `->` (an empty comment).
    fn comment(&mut self) -> Next {
        let b = self.bytes();
        let body = self.pos + 4;
        let rest = &b[body..];
        let (text_end, end) = match comment_extent(rest) {
            Some((text, end)) if memchr::memchr(b'\0', &rest[..text]).is_none() => {
                (body + text, body + end)
            }
            _ => return Next::Rest(State::Data, None),
        };
        self.flush();
        let mut comment = StrTendril::new();
        self.append(&mut comment, body, text_end);
        self.give(Token::CommentToken(comment));
        self.pos = end;
        Next::Data
    }

    /// A start or end tag from the `<` at `pos`, attributes and all, given to the sink.
    fn tag(&mut self, kind: TagKind) -> Next {
        let b = self.bytes();
        let mut i = self.pos + if kind == TagKind::StartTag { 1 } else { 2 };
        let name_start = i;
        while i < b.len() && !ends_tag_name(b[i]) && b[i] != 0 {
            i += 1;
        }
        if i >= b.len() || b[i] == 0 {
            return Next::Rest(State::Data, None);
        }
        let name = LocalName::from(lower(&self.src[name_start..i]));
        let mut attrs: Vec<Attribute> = Vec::new();
        let mut names: FxHashSet<LocalName> = FxHashSet::default();
        let mut duplicates = false;
        let mut self_closing = false;
        loop {
            while i < b.len() && is_space(b[i]) {
                i += 1;
            }
            match b.get(i) {
                None | Some(0) => return Next::Rest(State::Data, None),
                Some(b'>') => {
                    i += 1;
                    break;
                }
                Some(b'/') => match b.get(i + 1) {
                    None => return Next::Rest(State::Data, None),
                    Some(b'>') => {
                        self_closing = true;
                        i += 2;
                        break;
                    }
                    // A stray `/`: read on as if before an attribute's name.
                    Some(_) => i += 1,
                },
                Some(_) => {
                    // The first character is the name's even if it is `=`.
                    let start = i;
                    i += 1;
                    while i < b.len()
                        && !matches!(
                            b[i],
                            b'\t' | b'\n' | b'\x0c' | b' ' | b'/' | b'>' | b'=' | 0
                        )
                    {
                        i += 1;
                    }
                    if i >= b.len() || b[i] == 0 {
                        return Next::Rest(State::Data, None);
                    }
                    let attr_name = LocalName::from(lower(&self.src[start..i]));
                    while i < b.len() && is_space(b[i]) {
                        i += 1;
                    }
                    let mut value = StrTendril::new();
                    if b.get(i) == Some(&b'=') {
                        i += 1;
                        while i < b.len() && is_space(b[i]) {
                            i += 1;
                        }
                        match self.attr_value(i, &mut value) {
                            Some(end) => i = end,
                            None => return Next::Rest(State::Data, None),
                        }
                    }
                    // The first of two attributes of one name is kept. A set past a few
                    // names: scanning them all for each would be quadratic in their number.
                    let duplicate = if attrs.len() < MANY_ATTRIBUTES {
                        attrs.iter().any(|a| a.name.local == attr_name)
                    } else {
                        if names.is_empty() {
                            names.extend(attrs.iter().map(|a| a.name.local.clone()));
                        }
                        !names.insert(attr_name.clone())
                    };
                    if duplicate {
                        duplicates = true;
                    } else {
                        attrs.push(Attribute {
                            name: QualName::new(None, ns!(), attr_name),
                            value,
                        });
                    }
                }
            }
        }
        self.flush();
        self.pos = i;
        let token = Token::TagToken(Tag {
            kind,
            name: name.clone(),
            self_closing,
            attrs,
            had_duplicate_attributes: duplicates,
        });
        if kind == TagKind::StartTag {
            self.last_start = Some(name);
        }
        match (self.emit(token), self.last_start.clone()) {
            (TokenSinkResult::RawData(raw), Some(last)) => Next::Raw(raw, last),
            (TokenSinkResult::RawData(raw), None) => Next::Rest(State::RawData(raw), None),
            (TokenSinkResult::Plaintext, last) => Next::Rest(State::Plaintext, last),
            _ => Next::Data,
        }
    }

    /// An attribute's value from `i` (after `=` and spaces) into `value`; where the input
    /// goes on, or `None` at a NUL or the end of input.
    fn attr_value(&self, mut i: usize, value: &mut StrTendril) -> Option<usize> {
        let b = self.bytes();
        match b.get(i).copied() {
            None => None,
            // `<a href=>`: an empty value, and `>` ends the tag.
            Some(b'>') => Some(i),
            Some(q @ (b'"' | b'\'')) => {
                i += 1;
                loop {
                    let off = memchr::memchr3(q, b'&', b'\0', &b[i..])?;
                    self.append(value, i, i + off);
                    i += off;
                    match b[i] {
                        b'&' => i = self.char_ref_in_value(i, value),
                        0 => return None,
                        _ => return Some(i + 1),
                    }
                }
            }
            Some(_) => self.unquoted_value(i, value),
        }
    }

    /// An unquoted value from `i`: it ends at a space or `>`.
    fn unquoted_value(&self, mut i: usize, value: &mut StrTendril) -> Option<usize> {
        let b = self.bytes();
        let mut from = i;
        loop {
            match b.get(i) {
                None | Some(0) => return None,
                Some(&c) if is_space(c) || c == b'>' => {
                    self.append(value, from, i);
                    return Some(i);
                }
                Some(b'&') => {
                    self.append(value, from, i);
                    i = self.char_ref_in_value(i, value);
                    from = i;
                }
                Some(_) => i += 1,
            }
        }
    }

    fn char_ref_in_value(&self, at: usize, value: &mut StrTendril) -> usize {
        // Errors inside a tag come before its token: they change nothing.
        self.char_ref_at(at, true).append_to(value, at)
    }

    /// The character reference at the `&` at `at`, read as html5ever reads it.
    fn char_ref_at(&self, at: usize, in_attribute: bool) -> CharRef {
        let b = self.bytes();
        match b.get(at + 1).copied() {
            Some(b'#') => numeric_ref(b, at),
            Some(c) if c.is_ascii_alphanumeric() => named_ref(self.src, at, in_attribute),
            _ => CharRef::Ampersand { error: false },
        }
    }

    /// In a raw-text state: its text up to the end tag of the element that opened it.
    fn raw(&mut self, kind: RawKind, name: LocalName) -> Next {
        let b = self.bytes();
        let start = self.pos;
        let end = if kind == RawKind::ScriptData {
            script_end(b, start, name.as_bytes())
        } else {
            find_end_tag(b, start, name.as_bytes())
        };
        let body = &b[start..end.unwrap_or(b.len())];
        if memchr::memchr(b'\0', body).is_some() {
            return Next::Rest(State::RawData(kind), Some(name));
        }
        let body_end = start + body.len();
        if kind == RawKind::Rcdata {
            // Text with character references, `<` included as text.
            while let Some(off) = memchr::memchr(b'&', &self.bytes()[self.pos..body_end]) {
                let amp = self.pos + off;
                self.text(self.pos, amp);
                self.pos = amp;
                // A reference cannot run into the end tag: `<` ends every name.
                self.char_ref_in_text();
            }
        }
        self.text(self.pos, body_end);
        self.pos = body_end;
        match end {
            Some(_) => self.tag(TagKind::EndTag),
            None => Next::Eof,
        }
    }
}

/// html5ever's own tokenizer on `text` into `sink`, from `state` (`last_start_tag`: the start
/// tag whose end tag leaves a raw-text state), then ended when `end`. It never drops a U+FEFF
/// (see `Dom::parse_reference`). Whether it read all of `text`: it may stop short to look
/// further ahead than the text goes.
pub(super) fn html5ever_tokenize<S: TokenSink>(
    sink: &S,
    text: &str,
    state: State,
    last_start_tag: Option<&LocalName>,
    end: bool,
) -> bool {
    let opts = TokenizerOpts {
        discard_bom: false,
        initial_state: Some(state),
        last_start_tag_name: last_start_tag.map(ToString::to_string),
        ..TokenizerOpts::default()
    };
    let tokenizer = Tokenizer::new(Borrowed(sink), opts);
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(text));
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    if end {
        tokenizer.end();
    }
    input.is_empty()
}

/// Where the markup that the `<` at `at` opens ends, as the tokenizer reads it, when it is
/// not a start tag: a comment (at its close, or an abrupt `<!-->` / `<!--->`), a doctype, an
/// end tag, a bogus comment (`<!...>`, `<?...>`, `</...>`: at the next `>`), or `</>`. `None`:
/// the `<` is text, or opens a start tag. The chunker reads serialized markup with it.
pub(crate) fn markup_end(b: &[u8], at: usize) -> Option<usize> {
    let until_gt = |from: usize| find_byte(b'>', b, from).map_or(b.len(), |gt| gt + 1);
    match b.get(at + 1)? {
        b'!' if b[at + 2..].starts_with(b"--") => {
            Some(comment_extent(&b[at + 4..]).map_or(b.len(), |(_, end)| at + 4 + end))
        }
        b'!' | b'?' => Some(until_gt(at)),
        b'/' => match b.get(at + 2)? {
            b'>' => Some(at + 3),
            _ => Some(until_gt(at)),
        },
        _ => None,
    }
}

/// Where a comment whose body (what follows `<!--`) is `body` ends, counted in the body: the
/// end of its text and the end of its close. `>` or `->` first closes it empty; else its first
/// `-->` or `--!>` does. `None`: it runs to the end of input.
fn comment_extent(body: &[u8]) -> Option<(usize, usize)> {
    if body.starts_with(b">") {
        Some((0, 1))
    } else if body.starts_with(b"->") {
        Some((0, 2))
    } else {
        comment_close(body).map(|(i, len)| (i, i + len))
    }
}

/// The first `-->` or `--!>` in a comment's text: where, and its length.
fn comment_close(rest: &[u8]) -> Option<(usize, usize)> {
    let dashes = memmem::Finder::new(b"--");
    let mut from = 0;
    while let Some(off) = dashes.find(&rest[from..]) {
        let i = from + off;
        match rest.get(i + 2) {
            Some(b'>') => return Some((i, 3)),
            Some(b'!') if rest.get(i + 3) == Some(&b'>') => return Some((i, 4)),
            _ => from = i + 1,
        }
    }
    None
}

/// `s` with ASCII capitals made small, as the tokenizer does to tag and attribute names.
fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|c| c.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

fn find_byte(needle: u8, b: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(needle, &b[from..]).map(|i| from + i)
}

/// `DOCTYPE html>` (any case, spaces as the spec reads them) after `<!`: its length.
fn simple_doctype(after: &[u8]) -> Option<usize> {
    if after.len() < 7 || !after[..7].eq_ignore_ascii_case(b"doctype") {
        return None;
    }
    let mut i = 7;
    let spaces = i;
    while i < after.len() && is_space(after[i]) {
        i += 1;
    }
    if i == spaces || after.len() < i + 4 || !after[i..i + 4].eq_ignore_ascii_case(b"html") {
        return None;
    }
    i += 4;
    while i < after.len() && is_space(after[i]) {
        i += 1;
    }
    (after.get(i) == Some(&b'>')).then_some(i + 1)
}

/// Where the contents of the raw-text element `name` (lowercase) that start at `from` end,
/// as the parser ends them: a script's by the script data states (an end tag inside
/// `<!--<script>` ... is text), the others' at their end tag. `None`: at the end of input.
/// The chunker reads serialized markup with it, so that text cannot pass for a tag there.
pub(crate) fn raw_text_end(b: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    if name == b"script" {
        script_end(b, from, name)
    } else {
        find_end_tag(b, from, name)
    }
}

/// The first `</name` (any case) followed by a space, `/` or `>`: the end tag that closes
/// a raw-text element.
fn find_end_tag(b: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut i = from;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        let at = i + off;
        if is_end_tag(b, at, name) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Whether `</name` (any case) and a space, `/` or `>` are at `at`.
fn is_end_tag(b: &[u8], at: usize, name: &[u8]) -> bool {
    let after = at + 2 + name.len();
    b.len() > after
        && b[at + 1] == b'/'
        && b[at + 2..after].eq_ignore_ascii_case(name)
        && ends_tag_name(b[after])
}

/// Where a script's text ends: its end tag, found as the script data states find it — an
/// end tag inside `<!--` ... `<script>` ... `</script>` (escaped, then double-escaped)
/// does not end it. `None`: it runs to the end of input.
fn script_end(b: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let end_tag_at = |i: usize| is_end_tag(b, i, name);
    // The letters after `at` (lowercase-compared to `script`) and the byte after them.
    let script_word = |at: usize| -> (bool, usize) {
        let run = b[at..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        (b[at..at + run].eq_ignore_ascii_case(b"script"), at + run)
    };
    let mut i = from;
    loop {
        // The script data state: only `</script` or `<!--` matter.
        loop {
            let at = i + memchr::memchr(b'<', b.get(i..)?)?;
            if end_tag_at(at) {
                return Some(at);
            }
            if b[at..].starts_with(b"<!--") {
                i = at + 4;
                break;
            }
            i = at + 1;
        }
        // Escaped, `dashes` (up to 2) just seen: the `--` of `<!--` count.
        let mut dashes = 2;
        let mut double = false;
        loop {
            let &c = b.get(i)?;
            match c {
                b'-' => {
                    dashes = (dashes + 1).min(2);
                    i += 1;
                    continue;
                }
                b'>' if dashes == 2 => {
                    i += 1;
                    break; // back to script data
                }
                b'<' if !double && b.get(i + 1) == Some(&b'/') => {
                    if end_tag_at(i) {
                        return Some(i);
                    }
                    i += 2;
                }
                b'<' if !double && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) => {
                    let (script, j) = script_word(i + 1);
                    match b.get(j) {
                        None => return None,
                        Some(&e) if ends_tag_name(e) => {
                            double = script;
                            i = j + 1;
                        }
                        Some(_) => i = j,
                    }
                }
                b'<' if double && b.get(i + 1) == Some(&b'/') => {
                    let (script, j) = script_word(i + 2);
                    match b.get(j) {
                        None => return None,
                        Some(&e) if ends_tag_name(e) => {
                            double = !script;
                            i = j + 1;
                        }
                        Some(_) => i = j,
                    }
                }
                _ => i += 1,
            }
            dashes = 0;
        }
    }
}

/// `&#...` at `at`: decimal or hex, with html5ever's replacements for values no character
/// may have.
fn numeric_ref(b: &[u8], at: usize) -> CharRef {
    let mut i = at + 2;
    let base = if matches!(b.get(i), Some(b'x' | b'X')) {
        i += 1;
        16
    } else {
        10
    };
    let digits = i;
    let mut num: u32 = 0;
    let mut too_big = false;
    while let Some(d) = b.get(i).and_then(|&c| char::from(c).to_digit(base)) {
        num = num.wrapping_mul(base);
        if num > 0x10_FFFF {
            too_big = true;
        }
        num = num.wrapping_add(d);
        i += 1;
    }
    if i == digits {
        // `&#` with no digit is text.
        return CharRef::Ampersand { error: true };
    }
    let mut error = true;
    if b.get(i) == Some(&b';') {
        i += 1;
        error = false;
    }
    let (c, bad_value) = match num {
        n if n > 0x10_FFFF || too_big => ('\u{fffd}', true),
        0 | 0xD800..=0xDFFF => ('\u{fffd}', true),
        0x80..=0x9F => (
            C1_REPLACEMENTS[(num - 0x80) as usize]
                .unwrap_or_else(|| char::from_u32(num).unwrap_or('\u{fffd}')),
            true,
        ),
        n @ (0x01..=0x08 | 0x0B | 0x0D..=0x1F | 0x7F | 0xFDD0..=0xFDEF) => {
            (char::from_u32(n).unwrap_or('\u{fffd}'), true)
        }
        n => (
            char::from_u32(n).unwrap_or('\u{fffd}'),
            n & 0xFFFE == 0xFFFE,
        ),
    };
    CharRef::Chars {
        chars: [c, '\0'],
        len: 1,
        end: i,
        error: error || bad_value,
    }
}

/// `&name` at `at`: the longest name in the table the input starts with; in an attribute,
/// a name without its `;` followed by `=` or a letter or digit is text (for old URLs).
fn named_ref(src: &str, at: usize, in_attribute: bool) -> CharRef {
    let b = src.as_bytes();
    let mut best: Option<((u32, u32), usize)> = None;
    let mut j = at + 1;
    // The names are ASCII letters and digits with a final `;`: any other byte ends the match.
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b';') {
        match NAMED_ENTITIES.get(&src[at + 1..=j]) {
            Some(&m) => {
                if m.0 != 0 {
                    best = Some((m, j + 1));
                }
                j += 1;
            }
            None => break,
        }
    }
    let Some(((c1, c2), end)) = best else {
        // Not a reference; an error when the letters and digits after `&` end with `;`.
        let run = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        return CharRef::Ampersand {
            error: b.get(at + 1 + run) == Some(&b';'),
        };
    };
    let semicolon = b[end - 1] == b';';
    if !semicolon && in_attribute {
        if let Some(&next) = b.get(end) {
            if next == b'=' || next.is_ascii_alphanumeric() {
                return CharRef::Ampersand { error: false };
            }
        }
    }
    let first = char::from_u32(c1).unwrap_or('\u{fffd}');
    let (second, len) = match char::from_u32(c2) {
        Some(second) if c2 != 0 => (second, 2),
        _ => ('\0', 1),
    };
    CharRef::Chars {
        chars: [first, second],
        len,
        end,
        error: !semicolon,
    }
}

#[cfg(test)]
mod tests {
    use crate::dom::Dom;

    /// Pieces of markup where tokenizers go wrong, put together at random (a fixed seed):
    /// every document must build html5ever's tree.
    const PIECES: &[&str] = &[
        "<p>",
        "</p>",
        "<div class=a>",
        "</div>",
        "<pre>",
        "<textarea>",
        "</textarea>",
        "<listing>",
        "<title>",
        "</title>",
        "<script>",
        "</script>",
        "</SCRIPT >",
        "<style>",
        "</style>",
        "<xmp>",
        "</xmp",
        "<noscript>",
        "<iframe>",
        "</iframe>",
        "<plaintext>",
        "<svg>",
        "</svg>",
        "<math>",
        "<![CDATA[x]]>",
        "<!--",
        "-->",
        "--!>",
        "<!-->",
        "<!--->",
        "<!-- c -->",
        "<!---->",
        "-",
        "--",
        "<!",
        "<!DOCTYPE html>",
        "<!doctype HTML >",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\">",
        "<!DOCTYPE>",
        "<!DOC>",
        "<?x>",
        "</ x>",
        "</>",
        "</",
        "<",
        ">",
        "<3",
        "<a href='x?a=1&b=2&copy=3&amp;c'>",
        "</a>",
        "<a href=x&notin;y title=\"&not\" alt=&amp>",
        "<b id=1 id=2 ID=3>",
        "<img src=a/>",
        "<br/>",
        "<input value=\"a\"b>",
        "<td =x>",
        "<x a b = c d='e'f>",
        "<a/ b>",
        "<a b=>",
        "&amp;",
        "&amp",
        "&notit;",
        "&notin;",
        "&not",
        "&nosuch;",
        "&",
        "&;",
        "&#",
        "&#x",
        "&#10;",
        "&#10",
        "&#x0A",
        "&#0;",
        "&#128;",
        "&#x80",
        "&#xD800;",
        "&#99999999;",
        "&#x1F600;",
        "&#xFFFE;",
        "&NewLine;",
        "&nbsp",
        "&lt;&gt;",
        "\n",
        "\r\n",
        "\r",
        " ",
        "\t",
        "\u{feff}",
        "\u{a0}",
        "é",
        "text",
        "\0",
        "<table>",
        "<tr>",
        "<td>",
        "</table>",
        "<select><option>",
        "<template>",
        "</template>",
        "<body>",
        "<html>",
        "<head>",
        "<script><!--",
        "<script>",
        "</script",
        "<!--<script>",
        "</script>-->",
        "-->",
        "<scripts>",
        "<script/>",
        "<SCRIPT>",
        "var a = '<!--';",
        "<b></b>",
        "<i>",
        "</i>",
        "<table><tr><td>x</table>",
        "<frameset>",
        "<font>",
        "<A HREF=1>",
    ];

    #[test]
    fn many_attributes_keep_the_first_of_each_name() {
        // Past `MANY_ATTRIBUTES`, duplicates are found with a set.
        let attrs: Vec<String> = (0..60).map(|i| format!("a{}={i}", i % 23)).collect();
        let html = format!("<p {}>x<p A1=z {} a5>", attrs.join(" "), attrs.join(" "));
        let fast = Dom::parse(html.as_bytes(), None, false);
        assert!(fast == Dom::parse_reference(html.as_bytes(), None, false));
        let out = fast.serialize().0;
        assert!(out.contains(r#"a22="22" node="#) && out.contains(r#"<p a1="z" a0="0""#));
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn random_documents_build_html5evers_tree() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for case in 0..40_000 {
            let n = 1 + (xorshift(&mut state) % 40) as usize;
            let mut doc = String::new();
            for _ in 0..n {
                let r = xorshift(&mut state);
                doc.push_str(PIECES[(r % PIECES.len() as u64) as usize]);
            }
            let fast = Dom::parse(doc.as_bytes(), None, false);
            let reference = Dom::parse_reference(doc.as_bytes(), None, false);
            if fast != reference {
                let at = (0..fast.nodes.len().min(reference.nodes.len()))
                    .find(|&i| fast.nodes[i] != reference.nodes[i]);
                panic!(
                    "case {case}: {doc:?}\nfirst different node {at:?}: {:?}\nhtml5ever's: {:?}",
                    at.map(|i| &fast.nodes[i]),
                    at.map(|i| &reference.nodes[i])
                );
            }
        }
    }
}
