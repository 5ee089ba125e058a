"""A page as a ScribeAgent model reads it: its DOM cleaned under a profile and cut at start
tags into chunks of at most a token budget. `pagelens prep` (what a model is trained on) and
the ScribeAgent agent (what it is shown at inference) both make pages with this, so that the
two are made alike."""

from __future__ import annotations

from pagelens import CLEAN_PROFILES, Chunk, Dom, Tokenizer
from pagelens.errors import ArgumentError

MIN_CHUNK_TOKENS = 16  # below this a chunk cannot hold a start tag and some text


def check_chunking(profile: str, max_tokens: int) -> None:
    """An ArgumentError for a profile the core does not have or a budget under the minimum."""
    if max_tokens < MIN_CHUNK_TOKENS:
        raise ArgumentError(f"max_tokens must be at least {MIN_CHUNK_TOKENS}, not {max_tokens}")
    if profile not in CLEAN_PROFILES:
        raise ArgumentError(f"unknown cleaning profile {profile!r}; expected {' or '.join(CLEAN_PROFILES)}")


def page_chunks(
    dom: Dom, profile: str, max_tokens: int, tokenizer: Tokenizer, keep: list[int] | None = None
) -> tuple[Dom, list[Chunk]]:
    """``dom`` cleaned under ``profile`` (``keep``: ids that survive every rule) and its chunks
    of at most ``max_tokens``."""
    cleaned = dom.clean(profile, tokenizer=tokenizer, keep=keep)  # type: ignore[arg-type]
    return cleaned, cleaned.chunks(max_tokens, tokenizer)
