"""Argument types shared by the commands: every flag is checked where it is parsed.

A bad value is one line that names the flag, the value and what was expected (exit 2).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable

from ..i18n import LANGS


class ArgParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``attnlab grade: error: ... (see --help)``, exit 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _number(kind: type, test: Callable[[float], bool], expected: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if (isinstance(value, float) and not math.isfinite(value)) or not test(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = expected  # argparse names the type in some messages
    return parse


positive_int = _number(int, lambda x: x >= 1, "an integer >= 1")
nonneg_int = _number(int, lambda x: x >= 0, "an integer >= 0")
positive_float = _number(float, lambda x: x > 0, "a number > 0")
nonneg_float = _number(float, lambda x: x >= 0, "a number >= 0")
probability = _number(float, lambda x: 0 < x <= 1, "a number in (0, 1]")


def bounded_float(low: float, high: float):
    return _number(float, lambda x: low <= x <= high, f"a number in [{low:g}, {high:g}]")


def bounded_int(low: int, high: int):
    return _number(int, lambda x: low <= x <= high, f"an integer in [{low}, {high}]")


def int_list(text: str) -> tuple[int, ...]:
    """Comma-separated positive integers."""
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def name_list(choices: Iterable[str]):
    """Comma-separated names, each one of ``choices``."""
    allowed = tuple(choices)

    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        bad = [n for n in names if n not in allowed]
        if not names or bad:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated names from {', '.join(allowed)}, got {text!r}"
            )
        return names

    return parse


def add_lang(p: argparse.ArgumentParser, what: str = "text") -> None:
    p.add_argument("--lang", choices=LANGS, default="en", help=f"language of the {what}")


def progress_wanted() -> bool:
    return sys.stderr.isatty()
