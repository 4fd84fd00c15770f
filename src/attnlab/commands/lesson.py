"""``attnlab lesson``: run a lesson of the attention course: its code, its output, its words."""

from __future__ import annotations

from ..errors import UserError, closest
from ._args import add_lang, check_outputs, examples, nonneg_int, positive_int

NAME = "lesson"
FORMATS = ("py", "ipynb", "both")


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="run a lesson of the attention course: each step's code, output and explanation",
        description="Run a lesson end to end: each step prints its code, runs it (every number is "
        "computed live by attnlab's NumPy reference and PyTorch), then explains. --export writes "
        "the same lesson as a script and a notebook to edit, with exercises that check "
        "themselves. 'attnlab lesson list' lists the lessons.",
        epilog=examples(
            "attnlab lesson 1 --lang ja",
            "attnlab lesson 2 --section 4",
            "attnlab lesson 1 --export lesson1 --lang zh",
            "attnlab lesson 1 --exercise 1 --solution",
            "attnlab lesson 3 --quiz",
            "attnlab lesson 1 --plots figs/",
        ),
    )
    p.add_argument("target", nargs="?", default="1", help="lesson number (default 1), or 'list'")
    add_lang(p, "lesson")
    p.add_argument(
        "--seed", type=nonneg_int, default=0, help="seed for the random examples (default 0)"
    )
    p.add_argument("--section", type=nonneg_int, metavar="K", help="run only step K (0: the setup)")
    p.add_argument("--plots", metavar="DIR", help="also write the lesson's figures as PNG into DIR")
    p.add_argument(
        "--exercise",
        type=positive_int,
        metavar="K",
        help="show exercise K: the task, its starting code and what the check says about it",
    )
    p.add_argument(
        "--solution", action="store_true", help="with --exercise: run and check the worked answer"
    )
    p.add_argument(
        "--quiz", action="store_true", help="ask the review questions, check the answers, score"
    )
    p.add_argument(
        "--export",
        metavar="DIR",
        help="write lessonN.py (py:percent, runs with python) and lessonN.ipynb into DIR",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="with --export: which files (default both)",
    )
    p.add_argument(
        "--force", action="store_true", help="with --export: overwrite existing lesson files"
    )
    p.add_argument(
        "--wheel",
        action="store_true",
        help="with --export: build attnlab's wheel into DIR; the notebook's first cell installs it",
    )
    p.add_argument(
        "--install-from",
        metavar="URL",
        help="with --export: the notebook's first cell pip-installs attnlab from URL when missing",
    )
    p.add_argument(
        "--steps",
        type=positive_int,
        metavar="N",
        help="training steps per model, for a lesson that trains (its setup's STEPS)",
    )
    p.set_defaults(run=run)


_EXPORT_ONLY = (
    ("--format", "format"), ("--force", "force"), ("--wheel", "wheel"),
    ("--install-from", "install_from"),
)  # fmt: skip


def run(a) -> int:
    check_outputs((a.export, "--export", "folder"), (a.plots, "--plots", "folder"))
    from .. import lessons

    if a.target == "list":
        print(lessons.list_lessons(a.lang))
        return 0
    try:
        number = int(a.target)
    except ValueError:
        hint = "; did you mean 'list'?" if closest(a.target, ["list"]) else ""
        raise UserError(f"expected a lesson number or 'list', got {a.target!r}{hint}") from None
    modes = (("--section", a.section), ("--exercise", a.exercise), ("--quiz", a.quiz))
    chosen = [n for n, v in (*modes, ("--export", a.export)) if v not in (None, False)]
    if len(chosen) > 1:
        raise UserError(f"choose one of {', '.join(chosen)}")
    if a.solution and a.exercise is None:
        raise UserError("--solution goes with --exercise K")
    export_only = [n for n, v in _EXPORT_ONLY if getattr(a, v)]
    if export_only and a.export is None:
        raise UserError(f"{', '.join(export_only)}: only with --export DIR")
    overrides = {"STEPS": a.steps} if a.steps is not None else None
    if a.quiz:
        lessons.run_quiz(number, a.lang)
    elif a.export is not None:
        written = lessons.export(
            number,
            a.export,
            a.lang,
            a.format or "both",
            a.seed,
            a.force,
            overrides,
            wheel=a.wheel,
            install_from=a.install_from,
        )
        print("\n".join(str(p) for p in written))
    elif a.exercise is not None:
        lessons.run_exercise(
            number, a.exercise, a.lang, a.seed, a.plots, solution=a.solution, overrides=overrides
        )
    else:
        lessons.run(number, a.lang, a.seed, a.section, a.plots, overrides=overrides)
    return 0
