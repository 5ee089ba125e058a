//! Offline BPE tokenizers. The vocabularies are compiled into the binary by tiktoken-rs,
//! so counting never touches the network.

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

    fn bpe(self) -> &'static CoreBPE {
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
