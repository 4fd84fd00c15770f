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
