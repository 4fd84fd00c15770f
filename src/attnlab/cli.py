"""The ``attnlab`` command: argparse subcommands, each mapped onto a typed config.

Every subcommand parses its arguments into a dataclass and calls one function that returns its
result; this module only prints. Errors a user can fix are one line on stderr (exit 2);
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from . import __version__


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit code 2."""


@dataclass(frozen=True)
class CheckConfig:
    seed: int = 0
    dtypes: tuple[str, ...] = ("float64", "float32")
    json: bool = False


def run_check(cfg: CheckConfig) -> int:
    import numpy as np

    from . import check

    rows = check.run_all(cfg.seed, tuple(np.dtype(d).type for d in cfg.dtypes))
    failed = [r for r in rows if not r.parity.ok]
    if cfg.json:
        print(json.dumps({"ok": not failed, "rows": check.to_json(rows)}, indent=2))
    else:
        print(check.format_table(rows))
        print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
        for r in failed:
            print(f"FAIL {r.function} [{r.case}, {r.dtype}]: {r.parity.message}")
    return 1 if failed else 0


@dataclass(frozen=True)
class LessonConfig:
    target: str = "1"  # a lesson number, or "list"
    lang: str = "en"
    seed: int = 0
    section: int | None = None
    plots: str | None = None
    exercise: int | None = None
    quiz: bool = False


def run_lesson(cfg: LessonConfig) -> int:
    from . import lessons

    if cfg.target == "list":
        print(lessons.list_lessons(cfg.lang))
        return 0
    try:
        number = int(cfg.target)
    except ValueError:
        raise UsageError(f"expected a lesson number or 'list', got {cfg.target!r}") from None
    chosen = [
        n
        for n, v in (("--section", cfg.section), ("--exercise", cfg.exercise), ("--quiz", cfg.quiz))
        if v
    ]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join(chosen)}")
    if cfg.quiz:
        lessons.run_quiz(number, cfg.lang)
    elif cfg.exercise is not None:
        lessons.run_exercise(number, cfg.exercise, cfg.lang, cfg.seed, cfg.plots)
    else:
        lessons.run(number, cfg.lang, cfg.seed, cfg.section, cfg.plots)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnlab",
        description="Attention mechanisms to learn, check, run and show.",
        epilog="Run 'attnlab COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "check",
        help="verify every NumPy reference function against PyTorch",
        description="Run every attnlab.ref function (and the torch weights path) against PyTorch "
        "on random inputs and print max |difference| per case. float64 must agree to 1e-10; "
        "float32 may err at most 2x as much as PyTorch's own float32 result. Exit 1 on any "
        "mismatch.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the random inputs (default 0)")
    p.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=["float64", "float32"],
        help="precision to check; repeat for several (default: both)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report instead of a table")
    p.set_defaults(
        handler=lambda a: run_check(
            CheckConfig(seed=a.seed, dtypes=tuple(a.dtypes or ("float64", "float32")), json=a.json)
        )
    )

    p = sub.add_parser(
        "lesson",
        help="run a lesson of the attention course (numbers computed live)",
        description="Run a lesson end to end: every number is computed as it runs, by attnlab's "
        "NumPy reference and PyTorch. 'attnlab lesson list' lists the lessons.",
        epilog="examples: attnlab lesson 1 --lang ja | attnlab lesson 2 --section 4 | "
        "attnlab lesson 1 --plots figs/ | attnlab lesson 1 --exercise 3 | attnlab lesson 3 --quiz",
    )
    p.add_argument("target", nargs="?", default="1", help="lesson number (default 1), or 'list'")
    p.add_argument(
        "--lang", choices=["en", "ja"], default="en", help="English (default) or Japanese"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the random examples (default 0)")
    p.add_argument("--section", type=int, metavar="K", help="run only section K")
    p.add_argument("--plots", metavar="DIR", help="also write the lesson's figures as PNG into DIR")
    p.add_argument("--exercise", type=int, metavar="K", help="run exercise K with its explanation")
    p.add_argument("--quiz", action="store_true", help="ask the review questions one at a time")
    p.set_defaults(
        handler=lambda a: run_lesson(
            LessonConfig(a.target, a.lang, a.seed, a.section, a.plots, a.exercise, a.quiz)
        )
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except (UsageError, ValueError, TypeError, FileNotFoundError) as e:
        if args.debug:
            raise
        print(f"attnlab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
