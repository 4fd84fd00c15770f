"""Argument types shared by the commands: every flag is checked where it is parsed.

A bad value is one line that names the flag, the value and what was expected (exit 2). A
name that is nearly right (``attnlab lessen``) gets "did you mean 'lesson'?"; an unknown flag
points to the command's own ``--help``; ``--help`` shows each flag's default.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable

from ..errors import closest
from ..i18n import LANGS
from ..tables import fit


def examples(*commands: str, then: str = "") -> str:
    """An epilog of example commands, one to a line, never broken (``then``: a last line of
    prose, broken like any other)."""
    head = "examples:" if len(commands) > 1 else "example:"
    return "\n".join([head, *(f"  {c}" for c in commands), *([then] if then else [])])


class DefaultsFormatter(argparse.HelpFormatter):
    """Help that ends each flag's line with its default, where it has a telling one (not
    None, False or empty, and not already named in the help text). Text is broken by terminal
    columns (a CJK character takes two); a line of a description or epilog that starts with
    two spaces (an example command) is kept whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return fit(" ".join(text.split()), width).split("\n")

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = [
            indent + line if line.startswith("  ") else fit(indent + " ".join(line.split()), width)
            for line in text.split("\n")
        ]
        return "\n".join(lines)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        d = action.default
        if (
            "default" in text
            or d is None
            or d is False
            or d == []
            or d is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class ArgParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``attnlab grade: error: ... (see 'attnlab grade
    --help')``, exit 2, naming the command whose flags went wrong."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)
        self.set_defaults(_help_prog=self.prog)  # the deepest command parsed wins

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extra = self.parse_known_args(args, namespace)
        if extra:  # an unknown flag: point to the --help of the command it was given to
            prog = getattr(ns, "_help_prog", self.prog)
            self.exit(2, f"{prog}: error: unrecognized arguments: {' '.join(extra)} "
                      f"(see '{prog} --help')\n")  # fmt: skip
        return ns

    def _check_value(self, action: argparse.Action, value) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        close = closest(value, names)
        hint = f"; did you mean {close!r}?" if close else f" (choose from {', '.join(names)})"
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint}")


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


def png_path(text: str) -> str:
    """A file name for a PNG image: it must end in .png (the file is PNG whatever its name)."""
    if not text.lower().endswith(".png"):
        raise argparse.ArgumentTypeError(f"expected a file name ending in .png, got {text!r}")
    return text


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
        close = closest(bad[0], allowed) if bad else None
        if close:
            raise argparse.ArgumentTypeError(f"unknown name {bad[0]!r}; did you mean {close!r}?")
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


def check_outputs(*outputs: tuple[str | None, ...]) -> None:
    """Check, before any work, each ``(path, flag, kind[, what])`` whose path was given:
    that it can be the folder or file the command will write (``attnlab.files.check_output``).
    A command that writes calls this first thing in its ``run``: a path it cannot write is one
    line and exit 2, with nothing run and nothing written."""
    from ..files import check_output

    for path, flag, kind, *what in outputs:
        if path is not None:
            check_output(path, flag, kind, *what)
