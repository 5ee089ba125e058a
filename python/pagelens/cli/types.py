"""Argument types of the command line, in a module of their own that imports nothing but
argparse (and pagelens.hosts, which imports nothing): `pagelens browser`'s client, run at every
step of a shell agent, uses them too."""

from __future__ import annotations

import argparse

from pagelens.hosts import host_entry_problem


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a budget, a count of workers)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number of at least 0 (a time in milliseconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (0 <= value < float("inf")):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number of at least 0")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (a time in seconds)."""
    value = non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def host_entry(text: str) -> str:
    """An argparse type: an allow-list entry (a host, not a URL; see pagelens.hosts)."""
    problem = host_entry_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text.strip()


__all__ = ["host_entry", "non_negative_float", "positive_float", "positive_int"]
