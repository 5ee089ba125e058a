"""Any OpenAI-compatible chat endpoint, with retries, accounting and an optional reply cache.

``LLMClient()`` reads ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``PAGELENS_MODEL`` when no
argument names them. Retries with exponential backoff on 429 and 5xx answers and on broken
connections; every call's tokens (and cost, when prices are given) are added to ``usage``.
With ``cache_dir``, a reply is stored under a hash of the whole request, so a rerun of the same
prompts costs nothing and gives the same answers.

Agents call the client synchronously, from a thread. A client attached to an event loop
(:meth:`LLMClient.attach`) makes its requests on that loop, so that :meth:`LLMClient.cancel`
ends a call at once — a study's episode cut short leaves no thread waiting on a hung
endpoint. ``waiting_for`` says how long the current call has been waiting.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.errors import PagelensError

__all__ = ["LLMCancelled", "LLMClient", "LLMError", "LLMReply", "Usage"]


class LLMError(PagelensError, RuntimeError):
    """The endpoint could not give an answer (after retries), or was misconfigured."""


class LLMCancelled(LLMError):
    """The call was cancelled (its episode ended) before the endpoint answered."""


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


# A model call's timeout (seconds) and retries, unless told otherwise.
LLM_TIMEOUT = 120.0
LLM_RETRIES = 5


def default_model() -> str:
    """The model named by ``PAGELENS_MODEL`` (the one place it is read), or ""."""
    return os.environ.get("PAGELENS_MODEL", "")


class LLMClient:
    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = LLM_TIMEOUT,
        max_retries: int = LLM_RETRIES,
        backoff: float = 1.0,
        cache_dir: str | os.PathLike[str] | None = None,
        prices: tuple[float, float] | None = None,
        temperature: float | None = 0.0,
        on_retry: Callable[[str], None] | None = None,
    ):
        import openai

        self.model = model or default_model()
        if not self.model:
            raise LLMError("no model: pass model=... or set PAGELENS_MODEL")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or "unused"  # local servers need none
        # Retries are ours (backoff we control and count); the SDK's are off.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self._connection = {"base_url": base_url, "api_key": api_key, "timeout": timeout, "max_retries": 0}
        self.base_url = str(self._client.base_url)
        self.timeout = timeout
        # attach(): the loop requests are made on, its async client, and the calls in flight.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._async_client: Any = None
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._waiting_since: float | None = None
        self._waited = 0.0  # seconds spent in finished calls (retries included)
        self._idle = threading.Event()  # set while no call is in progress
        self._idle.set()
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.prices = prices  # (USD per 1M prompt tokens, USD per 1M completion tokens)
        self.temperature = temperature
        self.usage = Usage()
        self.retries = 0
        self.on_retry = on_retry  # told of each retry, in words (a CLI shows it)

    # -- cancellable calls ----------------------------------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make requests on ``loop`` (which must keep running while agents call from their
        threads), so that :meth:`cancel` can end them."""
        import openai

        if self._loop is not loop:
            self._loop = loop
            self._async_client = openai.AsyncOpenAI(**self._connection)  # type: ignore[arg-type]

    def cancel(self) -> None:
        """End every call in flight and the retries to come with :class:`LLMCancelled`, until
        :meth:`resume`. Calls made on an attached loop end at once; others at their timeout."""
        self._cancelled.set()
        with self._lock:
            pending = list(self._in_flight)
        for future in pending:
            future.cancel()

    def resume(self) -> None:
        """Calls go ahead again (a new episode)."""
        self._cancelled.clear()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no call is in progress (a cancelled one has unwound), at most ``timeout``
        seconds; True when idle."""
        return self._idle.wait(timeout)

    @property
    def waiting_for(self) -> float | None:
        """Seconds the current call (retries included) has been waiting; None when idle."""
        since = self._waiting_since
        return None if since is None else time.monotonic() - since

    @property
    def seconds_waited(self) -> float:
        """Seconds spent waiting for the endpoint so far, in every call (the one in progress
        too): a caller takes the difference over an episode, however it ended."""
        return self._waited + (self.waiting_for or 0.0)

    def _create(self, request: dict[str, Any]) -> Any:
        loop = self._loop
        on_loop_thread = False
        if loop is not None:
            try:
                on_loop_thread = asyncio.get_running_loop() is loop
            except RuntimeError:
                on_loop_thread = False
        if loop is None or on_loop_thread or loop.is_closed():
            return self._client.chat.completions.create(**request)
        future = asyncio.run_coroutine_threadsafe(self._async_client.chat.completions.create(**request), loop)
        with self._lock:
            self._in_flight.add(future)
        try:
            if self._cancelled.is_set():
                future.cancel()
            return future.result()
        except concurrent.futures.CancelledError:
            raise LLMCancelled(f"{self.base_url}: the call was cancelled before the endpoint answered") from None
        finally:
            with self._lock:
                self._in_flight.discard(future)

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
        self._waiting_since = since = time.monotonic()
        self._idle.clear()
        try:
            reply = self._call(request)
        finally:
            self._waited += time.monotonic() - since
            self._waiting_since = None
            self._idle.set()
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
            if self._cancelled.is_set():
                raise LLMCancelled(f"{self.base_url}: the call was cancelled before the endpoint answered")
            start = time.perf_counter()
            try:
                response = self._create(request)
            except LLMCancelled:
                raise
            except Exception as e:
                if attempt < self.max_retries and _retryable(e) and not self._cancelled.is_set():
                    attempt += 1
                    self.retries += 1
                    delay = self.backoff * (2 ** (attempt - 1)) * (0.5 + random.random() / 2)
                    if self.on_retry is not None:
                        self.on_retry(
                            f"{self.base_url}: {type(e).__name__}: {str(e)[:200]}; "
                            f"retry {attempt}/{self.max_retries} in {delay:.1f} s"
                        )
                    self._cancelled.wait(delay)  # a cancel ends the wait as well
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
