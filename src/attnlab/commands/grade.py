"""``attnlab grade``: grade a learner's NumPy attention against the reference, name the mistake."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from ..errors import UserError
from ._args import add_lang, bounded_float, bounded_int, nonneg_int, png_path, positive_int

NAME = "grade"
FORMATS = ("text", "json", "junit", "csv", "gradescope", "gradebook", "html")


def add_parser(sub) -> None:
    from ..grade import EXERCISES

    p = sub.add_parser(
        NAME,
        help="grade a NumPy attention exercise against the reference and name the mistake",
        description="Grade FILE (.py or .ipynb) or every file in DIR. Each submission runs in a "
        "bubblewrap sandbox (no network, no other files, only the standard library and NumPy, an "
        "unprivileged user, a timeout and resource limits); its results are compared here with "
        "attnlab's float64 reference (which agrees with PyTorch to 1e-10) on fixed and random "
        "cases, and known mistakes are named with a hint. Without "
        "bwrap a single file is graded with process isolation only (the report says so) and a "
        "folder is refused unless --no-sandbox is given. Exit 0 if every check passes, 1 if any "
        "fails, 2 on usage errors and internal grader errors.",
        epilog="examples: attnlab grade solution.py | attnlab grade hw.ipynb --format json | "
        "attnlab grade submissions/ --exercise self_attention --format csv -o class.csv | "
        "attnlab grade class/ --format html -o report.html (class/alice/*.py, class/bob/*.py)",
    )
    _add_what_to_grade(p, EXERCISES)
    _add_limits(p)
    add_lang(p, "hints")
    _add_help_flags(p)
    p.set_defaults(run=run)


def _add_what_to_grade(p, exercises) -> None:
    """The submission, its exercise, and where the report goes in which format."""
    p.add_argument(
        "path", metavar="FILE|DIR", help="a .py or .ipynb submission, or a folder of them"
    )
    p.add_argument(
        "--exercise",
        choices=list(exercises),
        metavar="NAME",
        help="exercise name (default: detected from the function defined)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, junit, csv (class: one row per file), gradescope (one "
        "file: Gradescope's results.json), gradebook (class: one row per student, one column "
        "per exercise), html (class: a report to open in a browser)",
    )
    p.add_argument(
        "-o",
        "--output",
        "--out",
        metavar="FILE",
        help="write the report to FILE (atomically: a reader never sees half a report) "
        "instead of standard output",
    )


def _add_limits(p) -> None:
    """The sandbox's limits, the seed and the parallel gradings."""
    p.add_argument(
        "--timeout",
        type=bounded_float(0.5, 3600),
        default=10.0,
        metavar="S",
        help="seconds per submission, 0.5 to 3600 (default 10)",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        help="seed for the random cases (default: a fresh one, shown in the report)",
    )
    p.add_argument(
        "--jobs", type=positive_int, help="parallel gradings for a folder (default: CPU count)"
    )
    p.add_argument(
        "--memory-mb",
        type=bounded_int(256, 1 << 20),
        default=2048,
        metavar="MB",
        help="address-space limit per submission, at least 256 (default 2048)",
    )


def _add_help_flags(p) -> None:
    """How much the hints say, the picture of a wrong answer, and grading without the sandbox."""
    p.add_argument(
        "--hint-level",
        type=int,
        choices=(1, 2, 3),
        default=3,
        help="1: the concept behind each mistake, 2: also where to look, 3: how to fix (default)",
    )
    p.add_argument(
        "--plot",
        type=png_path,
        metavar="FILE.png",
        help="one file: draw your weights beside the expected ones for the smallest failing "
        "case, wrong cells outlined",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bwrap (process isolation only): the submissions can read and write "
        "whatever your user can, see each other and reach the network. Only for code you trust.",
    )


def run(a) -> int:
    from .. import grade
    from ..grade import report

    path = Path(a.path)
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    if path.is_dir() and a.plot:
        raise UserError("--plot draws one file's weights; grade a single file with it")
    if path.is_dir() and a.format == "gradescope":
        raise UserError("--format gradescope grades one file (Gradescope runs once per student)")
    if a.output and Path(a.output).is_dir():
        raise UserError(f"-o {a.output}: a folder, expected a file name such as report.html")
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(2**31)
    kw = dict(
        lang=a.lang,
        timeout=a.timeout,
        seed=seed,
        memory_mb=a.memory_mb,
        isolation="process" if a.no_sandbox else "auto",
        hint_level=a.hint_level,
    )
    try:
        if path.is_dir():
            reports = grade.grade_dir(
                path, a.exercise, a.jobs, allow_unsandboxed=a.no_sandbox, **kw
            )
        else:
            reports = [grade.grade_file(path, a.exercise, **kw)]
    except (grade.UnsafeClassError, ValueError, OSError) as e:
        raise UserError(str(e)) from None
    body = report.render(reports, a.format, a.lang, single=not path.is_dir())
    if a.output:
        _write(a.output, body)
    else:
        print(body, end="")
    if path.is_dir():
        print(report.class_summary(reports, a.lang), file=sys.stderr)
    elif a.plot:
        _plot(reports[0], a.plot)
    errors = [r for r in reports if r.error]
    for r in errors:
        print(f"attnlab grade: {report.clean(r.file)}: {report.clean(r.error)}", file=sys.stderr)
    if errors:
        return 2
    return 0 if all(r.passed for r in reports) else 1


def _write(output: str, body: str) -> None:
    from ..files import atomic_write_text

    out = atomic_write_text(output, body)
    print(f"wrote {out}", file=sys.stderr)


def _plot(r, path: str) -> None:
    if not r.shown:
        print("--plot: nothing to draw (no failing case with weights)", file=sys.stderr)
        return
    from ..viz import compare_weights, save

    fig = compare_weights(r.shown["got"], r.shown["expected"], f"{r.exercise}: {r.shown['case']}")
    save(fig, path)
    print(f"wrote {path}", file=sys.stderr)
