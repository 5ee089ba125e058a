"""What the command groups share: reading input files, the model arguments, a dataclass
field's default (so that a flag's default is the settings' own), the live page's host."""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import ipaddress
import zlib
from pathlib import Path
from typing import Any

from pagelens.errors import ArgumentError


def host_port(text: str) -> tuple[str, int]:
    """An argparse type: ``HOST:PORT``, ``[IPv6]:PORT`` or ``:PORT`` (loopback), the port
    1 to 65535. An IPv6 address is written in brackets (``[::1]:8931``)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:8931 or [::1]:8931)")
    number = int(port)
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port {number} is not between 1 and 65535")
    if host.startswith("[") and host.endswith("]"):
        try:
            host = str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{host} is not an IPv6 address") from None
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"write an IPv6 address in brackets: [{host}]:{port}")
    elif any(c.isspace() or c in "/?#@[]" for c in host):
        raise argparse.ArgumentTypeError(f"{host!r} is not a host name or address")
    return host or "127.0.0.1", number


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


def agent_arguments(parser: argparse.ArgumentParser) -> None:
    """The agents' own options (pagelens.agents.factory.AgentSettings) as flags: `run` and
    `study run` take the same ones."""
    import pagelens
    from pagelens.agents.factory import AgentSettings

    parser.add_argument("--policies", help="SteP: folder of policy files (*.md); default: the built-in ones")
    parser.add_argument(
        "--max-invalid",
        type=int,
        default=default(AgentSettings, "max_invalid"),
        help="invalid actions shown back before a step fails",
    )
    scribe = parser.add_argument_group("scribe agent")
    scribe.add_argument(
        "--max-tokens",
        type=int,
        default=default(AgentSettings, "max_tokens"),
        help="chunk budget: the `pagelens prep --max-tokens` the model was trained with",
    )
    scribe.add_argument(
        "--tokenizer",
        default=default(AgentSettings, "tokenizer"),
        help="the tokenizer chunks are counted in: " + choices_help(pagelens.TOKENIZERS),
    )
    scribe.add_argument(
        "--samples", type=int, default=default(AgentSettings, "samples"), help="answers sampled per chunk, then voted"
    )
    scribe.add_argument("--planner-model", help="a general model that rewrites the objective and decides when to stop")
    scribe.add_argument("--planner-base-url", help="its endpoint (default: --base-url)")


def agent_settings(args: argparse.Namespace) -> Any:
    """The AgentSettings the flags of :func:`agent_arguments` say."""
    from pagelens.agents.factory import AgentSettings

    return AgentSettings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(AgentSettings)})
