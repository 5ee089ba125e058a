//! Offline BPE tokenizers. The vocabularies are compiled into the binary by tiktoken-rs,
//! so counting never touches the network.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use tiktoken_rs::CoreBPE;

/// The tokenizer budgets and counts use unless told otherwise: GPT-2's, as AgentOccam's
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
                "unknown tokenizer {name:?}; expected one of gpt2, r50k_base, cl100k_base, o200k_base"
            ),
            TokenizerError::Load { name, reason } => write!(f, "cannot load tokenizer {name}: {reason}"),
        }
    }
}

impl std::error::Error for TokenizerError {}

/// A named tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-2's vocabulary (`r50k_base`), the one AgentOccam's Table 4 counts with.
    R50k,
    Cl100k,
    O200k,
}

impl Encoding {
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
        match self {
            Encoding::R50k => r50k_encode(text),
            _ => self.bpe().encode_ordinary(text),
        }
    }

    pub fn count(self, text: &str) -> usize {
        self.encode(text).len()
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

/// GPT-2's pre-tokenizer without its one look-ahead (`\s+(?!\S)`), which needs
/// fancy-regex's backtracking engine; that engine is three quarters of tiktoken's time on
/// HTML. The look-ahead is applied by hand in [`r50k_encode`]. Possessive `++` in the
/// original changes nothing here: no alternative can backtrack into another.
const R50K_SPLIT: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+";

struct R50kParts {
    split: regex::Regex,
    /// Bytes of each mergeable token → its rank: a whole piece is often one token.
    ranks: FxHashMap<Vec<u8>, u32>,
}

fn r50k_parts() -> &'static R50kParts {
    static PARTS: OnceLock<R50kParts> = OnceLock::new();
    PARTS.get_or_init(|| {
        let bpe = Encoding::R50k.bpe();
        let ranks = (0..Encoding::R50k.mergeable_ranks())
            .filter_map(|r| bpe.decode_bytes(&[r]).ok().map(|b| (b, r)))
            .collect();
        R50kParts {
            split: regex::Regex::new(R50K_SPLIT).expect("valid pattern"),
            ranks,
        }
    })
}

/// tiktoken's `r50k_base` encoding, identical ids (tested against tiktoken on the corpus
/// and generated text), about three times faster on HTML. Pieces are split with the
/// linear-time `regex` engine; a whitespace run followed by a non-space leaves its last
/// character to the next piece, which is what `\s+(?!\S)` does. Pieces that are not one
/// token go through tiktoken's own BPE, cached per distinct piece within the call.
fn r50k_encode(text: &str) -> Vec<u32> {
    let parts = r50k_parts();
    let bpe = Encoding::R50k.bpe();
    let mut out = Vec::with_capacity(text.len() / 3);
    let mut merged: FxHashMap<&str, (usize, usize)> = FxHashMap::default();
    let mut pos = 0;
    while pos < text.len() {
        let Some(m) = parts.split.find_at(text, pos) else {
            break;
        };
        let mut end = m.end();
        let piece = m.as_str();
        if end < text.len() && piece.chars().next_back().is_some_and(char::is_whitespace) {
            // A whitespace run (the only alternative ending in whitespace), not at the end.
            if let Some((last, _)) = piece.char_indices().next_back().filter(|&(i, _)| i > 0) {
                end = m.start() + last;
            }
        }
        let piece = &text[m.start()..end];
        if let Some(&rank) = parts.ranks.get(piece.as_bytes()) {
            out.push(rank);
        } else if let Some(&(from, len)) = merged.get(piece) {
            out.extend_from_within(from..from + len);
        } else {
            let ids = bpe.encode_ordinary(piece);
            merged.insert(piece, (out.len(), ids.len()));
            out.extend_from_slice(&ids);
        }
        pos = end;
    }
    out
}

/// Any tokenizer the core counts with: an embedded tiktoken encoding, or a Hugging Face
/// `tokenizer.json` (ScribeAgent's Qwen tokenizer, for instance).
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
    pub fn named(name: &str) -> Result<Tokenizer, TokenizerError> {
        Encoding::from_name(name).map(Tokenizer::Tiktoken)
    }

    /// A Hugging Face `tokenizer.json` given as bytes.
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
        self.encode(text).len()
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
                        end += bpe.decode_bytes(&[t]).map(|b| b.len()).unwrap_or(0);
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
mod tests {
    use super::*;

    #[test]
    fn gpt2_counts_known_strings() {
        // "hello world" is two GPT-2 tokens: 31373, 995.
        assert_eq!(Encoding::R50k.encode("hello world"), vec![31373, 995]);
        assert_eq!(Encoding::from_name("gpt2").unwrap(), Encoding::R50k);
        assert!(Encoding::from_name("bert").is_err());
        assert_eq!(Encoding::Cl100k.count(""), 0);
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
            assert_eq!(r50k_encode(c), bpe.encode_ordinary(c), "{c:?}");
        }
    }
}
