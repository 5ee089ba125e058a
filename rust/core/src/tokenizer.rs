//! Offline BPE tokenizers. The vocabularies are compiled into the binary by tiktoken-rs,
//! so counting never touches the network.

use std::sync::Arc;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use tiktoken_rs::CoreBPE;

use crate::error::AxError;

/// A named tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-2's vocabulary (`r50k_base`), the one AgentOccam's Table 4 counts with.
    R50k,
    Cl100k,
    O200k,
}

impl Encoding {
    pub fn from_name(name: &str) -> Result<Encoding, AxError> {
        match name {
            "gpt2" | "r50k_base" => Ok(Encoding::R50k),
            "cl100k_base" => Ok(Encoding::Cl100k),
            "o200k_base" => Ok(Encoding::O200k),
            other => Err(AxError::Argument(format!(
                "unknown tokenizer {other:?}; expected one of gpt2, r50k_base, cl100k_base, o200k_base"
            ))),
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
        self.bpe().encode_ordinary(text)
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

/// Any tokenizer the core counts with: an embedded tiktoken encoding, or a Hugging Face
/// `tokenizer.json` (ScribeAgent's Qwen tokenizer, for instance).
#[derive(Clone)]
pub enum Tokenizer {
    Tiktoken(Encoding),
    HuggingFace { name: String, inner: Arc<tokenizers::Tokenizer> },
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokenizer({})", self.name())
    }
}

impl Tokenizer {
    /// `gpt2`/`r50k_base`, `cl100k_base` or `o200k_base`.
    pub fn named(name: &str) -> Result<Tokenizer, AxError> {
        Encoding::from_name(name).map(Tokenizer::Tiktoken)
    }

    /// A Hugging Face `tokenizer.json` given as bytes.
    pub fn from_json(name: &str, json: &[u8]) -> Result<Tokenizer, AxError> {
        let inner = tokenizers::Tokenizer::from_bytes(json)
            .map_err(|e| AxError::Argument(format!("cannot load tokenizer {name}: {e}")))?;
        Ok(Tokenizer::HuggingFace { name: name.to_owned(), inner: Arc::new(inner) })
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
                .map(|enc| enc.get_offsets().iter().map(|&(_, e)| e.min(text.len())).collect())
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
}
