"""``attnlab lesson``: run a lesson of the attention course, every number computed live."""

from __future__ import annotations

from ..errors import UserError
from ._args import add_lang, nonneg_int, positive_int

NAME = "lesson"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="run a lesson of the attention course (numbers computed live)",
        description="Run a lesson end to end: every number is computed as it runs, by attnlab's "
        "NumPy reference and PyTorch. 'attnlab lesson list' lists the lessons.",
        epilog="examples: attnlab lesson 1 --lang ja | attnlab lesson 2 --section 4 | "
        "attnlab lesson 1 --plots figs/ | attnlab lesson 1 --exercise 3 | attnlab lesson 3 --quiz",
    )
    p.add_argument("target", nargs="?", default="1", help="lesson number (default 1), or 'list'")
    add_lang(p, "lesson")
    p.add_argument(
        "--seed", type=nonneg_int, default=0, help="seed for the random examples (default 0)"
    )
    p.add_argument("--section", type=positive_int, metavar="K", help="run only section K")
    p.add_argument("--plots", metavar="DIR", help="also write the lesson's figures as PNG into DIR")
    p.add_argument(
        "--exercise", type=positive_int, metavar="K", help="run exercise K with its explanation"
    )
    p.add_argument("--quiz", action="store_true", help="ask the review questions one at a time")
    p.set_defaults(run=run)


def run(a) -> int:
    from .. import lessons

    if a.target == "list":
        print(lessons.list_lessons(a.lang))
        return 0
    try:
        number = int(a.target)
    except ValueError:
        raise UserError(f"expected a lesson number or 'list', got {a.target!r}") from None
    chosen = [
        n
        for n, v in (("--section", a.section), ("--exercise", a.exercise), ("--quiz", a.quiz))
        if v
    ]
    if len(chosen) > 1:
        raise UserError(f"choose one of {', '.join(chosen)}")
    if a.quiz:
        lessons.run_quiz(number, a.lang)
    elif a.exercise is not None:
        lessons.run_exercise(number, a.exercise, a.lang, a.seed, a.plots)
    else:
        lessons.run(number, a.lang, a.seed, a.section, a.plots)
    return 0
