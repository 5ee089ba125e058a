"""Any OpenAI-compatible chat endpoint, with retries, accounting and an optional reply cache.

``LLMClient()`` reads ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``PAGELENS_MODEL`` when no
argument names them. Retries with exponential backoff on 429 and 5xx answers and on broken
connections; every call's tokens (and cost, when prices are given) are added to ``usage``.
With ``cache_dir``, a reply is stored under a hash of the whole request, so a rerun of the same
prompts costs nothing and gives the same answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.errors import PagelensError

__all__ = ["LLMClient", "LLMError", "LLMReply", "Usage"]


class LLMError(PagelensError, RuntimeError):
    """The endpoint could not give an answer (after retries), or was misconfigured."""


@dataclass
class LLMReply:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cached: bool = False
    seconds: float = 0.0
    texts: list[str] = field(default_factory=list)  # every choice, when ``n`` asked for several


@dataclass
class Usage:
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, reply: LLMReply) -> None:
        with self._lock:
            self.calls += 1
            self.cached_calls += int(reply.cached)
            if not reply.cached:
                self.prompt_tokens += reply.prompt_tokens
                self.completion_tokens += reply.completion_tokens
                self.cost += reply.cost

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "cost")}


def _retryable(error: Exception) -> bool:
    import openai

    if isinstance(error, (openai.APIConnectionError, openai.APITimeoutError)):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return False


def default_model() -> str:
    """The model named by ``PAGELENS_MODEL`` (the one place it is read), or ""."""
    return os.environ.get("PAGELENS_MODEL", "")


class LLMClient:
    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        cache_dir: str | os.PathLike[str] | None = None,
        prices: tuple[float, float] | None = None,
        temperature: float | None = 0.0,
    ):
        import openai

        self.model = model or default_model()
        if not self.model:
            raise LLMError("no model: pass model=... or set PAGELENS_MODEL")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or "unused"  # local servers need none
        # Retries are ours (backoff we control and count); the SDK's are off.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self.base_url = str(self._client.base_url)
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.prices = prices  # (USD per 1M prompt tokens, USD per 1M completion tokens)
        self.temperature = temperature
        self.usage = Usage()
        self.retries = 0

    def _key(self, request: dict[str, Any]) -> str:
        blob = json.dumps({"base_url": self.base_url, **request}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def chat(self, messages: list[dict[str, str]], **params: Any) -> LLMReply:
        """One chat completion. ``params`` go to the endpoint (``n``, ``max_tokens``, ``stop``...)."""
        request: dict[str, Any] = {"model": self.model, "messages": messages, **params}
        if self.temperature is not None and "temperature" not in params:
            request["temperature"] = self.temperature
        key = self._key(request)
        if self.cache_dir is not None:
            cached = self.cache_dir / key[:2] / f"{key}.json"
            if cached.is_file():
                data = json.loads(cached.read_text())
                reply = LLMReply(**{**data, "cached": True, "seconds": 0.0})
                self.usage.add(reply)
                return reply
        reply = self._call(request)
        if self.cache_dir is not None:
            write_atomically(
                self.cache_dir / key[:2] / f"{key}.json",
                json.dumps(
                    {
                        k: getattr(reply, k)
                        for k in ("text", "model", "prompt_tokens", "completion_tokens", "cost", "texts")
                    }
                ),
            )
        self.usage.add(reply)
        return reply

    def _call(self, request: dict[str, Any]) -> LLMReply:
        attempt = 0
        while True:
            start = time.perf_counter()
            try:
                response = self._client.chat.completions.create(**request)
            except Exception as e:
                if attempt < self.max_retries and _retryable(e):
                    attempt += 1
                    self.retries += 1
                    time.sleep(self.backoff * (2 ** (attempt - 1)) * (0.5 + random.random() / 2))
                    continue
                raise LLMError(f"{self.base_url}: {type(e).__name__}: {e}") from e
            if not response.choices:
                raise LLMError(f"{self.base_url}: the answer has no choices")
            texts = [c.message.content or "" for c in response.choices]
            usage = response.usage
            prompt = usage.prompt_tokens if usage else 0
            completion = usage.completion_tokens if usage else 0
            cost = 0.0
            if self.prices:
                cost = (prompt * self.prices[0] + completion * self.prices[1]) / 1e6
            return LLMReply(
                texts[0],
                response.model or request["model"],
                prompt,
                completion,
                cost,
                False,
                time.perf_counter() - start,
                texts,
            )

    def complete(self, prompt: str, system: str | None = None, **params: Any) -> LLMReply:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        return self.chat(messages, **params)
