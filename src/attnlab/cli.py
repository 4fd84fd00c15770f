"""The ``attnlab`` command: registers one module per command and dispatches to it.

Each module in ``attnlab.commands`` has ``add_parser(subparsers)`` and ``run(args) -> int``.
A ``UserError`` (a mistake the user can fix) is printed as one line, exit 2, as is an
``OSError`` about a path (an output folder where a file stands, no permission); ``--debug``
shows its traceback first (the exit status stays 2). Anything else is a bug in attnlab and
keeps its traceback. A closed pipe (``attnlab lesson 1 | head``) ends quietly, as Unix tools
do.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from . import __version__
from .commands import (
    bench,
    book,
    check,
    compare,
    conform,
    exercise,
    explore,
    export_hf,
    grade,
    lesson,
    sample,
    serve,
    train,
    translate,
    viz,
)
from .commands._args import ArgParser
from .errors import UserError

COMMANDS = (
    check, lesson, exercise, grade, bench, train, sample, viz, explore, serve, translate, compare,
    book,
)  # fmt: skip
COMMANDS += (conform,)  # the conformance kit
COMMANDS += (export_hf,)  # Hugging Face


def build_parser() -> ArgParser:
    parser = ArgParser(
        prog="attnlab",
        description="Attention mechanisms to learn, check, run and show.",
        epilog="Run 'attnlab COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgParser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a bad flag (already printed)
        return int(e.code or 0)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except UserError as e:
        return _refuse(args, str(e))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away: stop quietly, like head's writers do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:  # a path that cannot be made, read or written: the user's to mend
        if e.filename is None:
            raise
        return _refuse(args, _path_error(e))


def _refuse(args, message: str) -> int:
    """Bad input: one line that names it, exit status 2; with --debug its traceback first
    (the same status, so that a script's check of it does not change with the flag)."""
    if args.debug:
        traceback.print_exc()
    prog = getattr(args, "_help_prog", f"attnlab {args.command}")  # 'attnlab viz gpt'
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def _path_error(e: OSError) -> str:
    """'cannot use PATH: REASON', naming the path that failed (and the other one of a rename).
    Making a folder fails with FileExistsError where a file has that name."""
    paths = " -> ".join(str(p) for p in (e.filename, e.filename2) if p is not None)
    if isinstance(e, FileExistsError | NotADirectoryError):
        return f"cannot use {paths}: a file stands where a folder is needed"
    return f"cannot use {paths}: {e.strerror or e}"
