"""What the command groups share: reading input files, the model arguments, a dataclass
field's default (so that a flag's default is the settings' own), the live page's host."""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import zlib
from pathlib import Path
from typing import Any

from pagelens.errors import ArgumentError


def read_file(path: Path) -> bytes:
    """A file's bytes, gunzipped when it is gzip (by name or by its magic bytes)."""
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as e:
            raise ArgumentError(f"{path}: not a complete gzip file ({e})") from None
    return data


def default(cls: Any, name: str) -> Any:
    """The default of field ``name`` of dataclass ``cls``."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    raise KeyError(f"{cls.__name__}.{name} has no default")


def choices_help(names: Any, what: str = "") -> str:
    listed = ", ".join(str(n) for n in names)
    return f"{what}: {listed}" if what else listed


def model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (or PAGELENS_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")


def llm_call_arguments(parser: argparse.ArgumentParser) -> None:
    """How long a model call may take and how often it is retried (the client's own defaults)."""
    from pagelens.llm import LLMClient

    parser.add_argument(
        "--llm-timeout",
        type=float,
        default=param_default(LLMClient.__init__, "timeout"),
        help="seconds a model call may take before it is retried (default %(default)g)",
    )
    parser.add_argument(
        "--llm-retries",
        type=int,
        default=param_default(LLMClient.__init__, "max_retries"),
        help="retries of a failed or timed-out model call, with backoff (default %(default)d)",
    )


def own_host(url: str) -> tuple[str, ...]:
    from pagelens.browser import HostAllowList

    return HostAllowList.for_start_url(url).hosts


def param_default(func: Any, name: str) -> Any:
    """The default of parameter ``name`` of ``func``: a flag's default is the function's own."""
    import inspect

    value = inspect.signature(func).parameters[name].default
    if value is inspect.Parameter.empty:
        raise KeyError(f"{func.__qualname__}({name}) has no default")
    return value
