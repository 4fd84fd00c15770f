"""``attnlab grade``: grade a learner's NumPy attention against the reference, name the mistake."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import UserError
from ._args import (
    add_lang,
    bounded_float,
    bounded_int,
    check_outputs,
    examples,
    nonneg_int,
    png_path,
    positive_int,
)

NAME = "grade"
FORMATS = ("text", "json", "junit", "csv", "gradescope", "gradebook", "html", "lms")


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
        "bwrap, your own single file is graded with process isolation only (the report says so); "
        "a folder, a file another user owns, and --format gradescope (other people's code) are "
        "refused with a clear error result unless --no-sandbox is given. Exit 0 if every check "
        "passes, 1 if any fails, 2 on usage errors, refusals and internal grader errors.",
        epilog=examples(
            "attnlab grade solution.py",
            "attnlab grade hw.ipynb --format json",
            "attnlab grade submissions/ --exercise self_attention --format csv -o class.csv",
            "attnlab grade class/ --format html -o report.html",
            then="(a class: one folder per student, class/alice/*.py, class/bob/*.py)",
        ),
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
        metavar="NAME",
        help=f"exercise name: {', '.join(exercises)}, or the one of --exercise-file (default: "
        "detected from the function defined)",
    )
    p.add_argument(
        "--exercise-file",
        metavar="FILE.py",
        help="the teacher's own exercise: a Python file declaring NAME, SIGNATURE, CONTRACT, "
        "reference(), cases(rng) with points, optional MISTAKES with hints (see the README); "
        "it runs here as trusted code, the submissions stay sandboxed",
    )
    p.add_argument(
        "--exercises",
        metavar="A,B,C",
        help="a class: the exercises assigned (the gradebook's columns, and what its mean is "
        "over; files for other exercises are ignored). Default: every exercise handed in",
    )
    p.add_argument(
        "--roster",
        metavar="FILE",
        help="a class: a file of student ids, one a line (# comments), so those who handed in "
        "nothing get a gradebook row (marked missing)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        metavar="FORMAT",
        default="text",
        help="text (default), json, junit, csv (class: one row per file), gradescope (one "
        "file: Gradescope's results.json), gradebook (class: one row per student, one column "
        "per exercise), html (class: a report to open in a browser), lms (class: a grade "
        "import for Canvas or Moodle: Student, ID, SIS User ID, Section, the mean out of 100)",
    )
    _add_class_outputs(p)
    p.add_argument(
        "-o",
        "--output",
        "--out",
        metavar="FILE",
        help="write the report to FILE (atomically: a reader never sees half a report) "
        "instead of standard output",
    )


def _add_class_outputs(p) -> None:
    """What a class grading writes besides its report: feedback files, a merged gradebook,
    the similar pairs."""
    p.add_argument(
        "--lms-column",
        default="attnlab",
        metavar="NAME",
        help="--format lms: the assignment column's name (default attnlab)",
    )
    p.add_argument(
        "--feedback",
        metavar="DIR",
        help="a class: write DIR/<student>.txt for every student (roster names too), their "
        "reports in --lang with the hints, their mean, their files not graded",
    )
    p.add_argument(
        "--merge",
        metavar="GRADEBOOK.csv",
        help="--format gradebook: the gradebook to merge this grading into (the students "
        "graded now replace their rows, the others stay as they were, each row with its seed "
        "and version); it must have this grading's columns",
    )
    p.add_argument(
        "--similarity",
        nargs="?",
        const=0.8,
        type=bounded_float(0.0, 1.0),
        metavar="T",
        help="a class: print the pairs of students' files for one exercise whose normalised "
        "code (no comments or docstrings, names renamed) is at least T alike (default 0.8)",
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
        help="seed for the random cases (default 0, the same on every run and machine, so a "
        "file always gets the same score; every report records the seed and attnlab's version)",
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
    check_outputs(
        (a.output, "-o", "file"), (a.plot, "--plot", "file"), (a.feedback, "--feedback", "folder")
    )
    from .. import grade
    from ..grade import report
    from ..grade.grader import grade_text, internal_error

    path = Path(a.path)
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    _teacher_exercise(a)
    if path.is_dir() and a.plot:
        raise UserError("--plot draws one file's weights; grade a single file with it")
    if path.is_dir() and a.format == "gradescope" and not a.exercise:
        raise UserError(
            "--format gradescope grades one file (Gradescope runs once per student): with a "
            "folder, give --exercise NAME and the file defining it is graded"
        )
    _class_only(a, path)
    assigned = _assigned(a, path)
    if a.merge:
        from ..grade.lms import check_mergeable

        check_mergeable(a.merge, assigned)
    roster = _roster(a.roster) if a.roster else None
    from ..grade.grader import DEFAULT_SEED

    seed = a.seed if a.seed is not None else DEFAULT_SEED
    kw = dict(
        lang=a.lang,
        timeout=a.timeout,
        seed=seed,
        memory_mb=a.memory_mb,
        isolation="process" if a.no_sandbox else "auto",
        hint_level=a.hint_level,
    )
    klass, notes, picked, helpers = None, [], None, None
    if path.is_dir() and a.format == "gradescope":  # one student's hand-in: find the file
        picked, notes, helpers = _one_students_file(path, a.exercise)
        if picked is None or picked.submission is None:  # nothing, or a link/unreadable file
            reports = [_nothing_for(a.exercise, notes, seed, picked)]
            return _emit(reports, a, klass, single=True)
        path = picked.path
    try:
        refused = None if path.is_dir() else _unsandboxed_refusal(path, a)
        if path.is_dir():
            done = grade.grade_class(path, assigned, a.jobs, allow_unsandboxed=a.no_sandbox, **kw)
            reports = done.reports
            students = sorted(set(done.students) | set(roster or []))
            klass = report.ClassInfo(students, assigned, done.ignored, roster)
        elif refused:
            reports = [internal_error(a.exercise or "unknown", str(path), refused)]
            reports[0].seed = seed
        elif picked is not None:  # graded as read when picked: read once, never opened again
            reports = [grade_text(picked.submission, path, a.exercise, helpers=helpers, **kw)]
        else:
            reports = [grade.grade_file(path, a.exercise, **kw)]
    except (grade.UnsafeClassError, ValueError, OSError) as e:
        raise UserError(str(e)) from None
    for r in reports:
        r.notes += notes
    return _emit(reports, a, klass, single=not path.is_dir())


def _class_only(a, path: Path) -> None:
    """The options that need a class folder, and --merge's format."""
    asked = (("--feedback", a.feedback), ("--similarity", a.similarity is not None))
    wanted = [f for f, v in asked if v]
    wanted += ["--format lms"] if a.format == "lms" else []
    if wanted and not path.is_dir():
        raise UserError(f"{', '.join(wanted)}: for a class folder; {path} is one file")
    if a.merge and (a.format != "gradebook" or not path.is_dir()):
        raise UserError("--merge merges a class folder's grading: use it with --format gradebook")
    if a.merge and not Path(a.merge).is_file():
        raise UserError(f"--merge {a.merge}: no such file; expected a gradebook CSV")


def _body(reports, a, klass, single: bool) -> str:
    """The report in ``a.format``: a merged gradebook, the LMS CSV, or ``report.render``."""
    from ..grade import report

    if a.merge:
        from ..grade.lms import merge_gradebook, merge_note

        body, done = merge_gradebook(a.merge, reports, klass)
        print(merge_note(done, reports), file=sys.stderr)
        return body
    if a.format == "lms":
        from ..grade.lms import lms_csv

        return lms_csv(reports, klass, a.lms_column)
    return report.render(reports, a.format, a.lang, single=single, klass=klass)


def _emit(reports, a, klass, single: bool) -> int:
    """Write the reports in ``a.format``, the class summary, and the exit status."""
    from ..grade import report
    from ..grade.view import for_terminal, shown_name

    body = _body(reports, a, klass, single)
    if a.output:
        _write(a.output, body)
    else:
        print(for_terminal(body) if a.format == "text" else body, end="")
    if not single:
        print(report.class_summary(reports, a.lang, klass), file=sys.stderr)
        _class_extras(reports, a, klass)
    elif a.plot:
        _plot(reports[0], a.plot)
    errors = [r for r in reports if r.error]
    for r in errors:
        print(f"attnlab grade: {shown_name(r.file)}: {report.clean(r.error)}", file=sys.stderr)
    if errors:
        return 2
    return 0 if all(r.passed for r in reports) else 1


def _teacher_exercise(a) -> None:
    """Load ``--exercise-file`` (registered beside the built-in exercises; it is assigned
    unless --exercise/--exercises say otherwise), then check ``--exercise``."""
    from ..grade import EXERCISES

    if a.exercise_file:
        from ..grade.teacher import load

        ex = load(a.exercise_file)
        if a.exercise is None and a.exercises is None:
            a.exercise = ex.name
    if a.exercise is not None and a.exercise not in EXERCISES:
        raise UserError(
            f"--exercise {a.exercise!r}: expected one of {', '.join(EXERCISES)} "
            "(a teacher's exercise: give its file with --exercise-file)"
        )


def _class_extras(reports, a, klass) -> None:
    """The feedback files and the similar pairs, when asked for."""
    if a.feedback:
        from ..grade.feedback import write_feedback

        written = write_feedback(a.feedback, reports, klass, a.lang)
        print(f"wrote {len(written)} feedback files to {a.feedback}", file=sys.stderr)
    if a.similarity is not None:
        from ..grade.similarity import similar_pairs, table

        print(table(similar_pairs(reports, a.similarity), a.similarity), file=sys.stderr)


def _assigned(a, path: Path) -> list[str] | None:
    """The exercises assigned to a class (``--exercises``, or the one ``--exercise``)."""
    from ..grade import EXERCISES

    if a.exercises is None:
        return [a.exercise] if a.exercise and path.is_dir() else None
    if not path.is_dir():
        raise UserError("--exercises is for a class folder; grade one file with --exercise NAME")
    if a.exercise:
        raise UserError("give --exercise NAME or --exercises A,B,C, not both")
    names = [x.strip() for x in a.exercises.split(",") if x.strip()]
    bad = [x for x in names if x not in EXERCISES]
    if bad or not names:
        raise UserError(
            f"--exercises {a.exercises!r}: expected names from {', '.join(EXERCISES)}, "
            "separated by commas"
        )
    return list(dict.fromkeys(names))


def _roster(file: str) -> list[str]:
    """The student ids of a roster file: one a line, blank lines and # comments skipped."""
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--roster {file}: cannot read it ({e}); expected a text file") from None
    ids = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    return list(dict.fromkeys(x for x in ids if x))


def _one_students_file(folder: Path, exercise: str):
    """In one student's hand-in (Gradescope's submission folder), the file for ``exercise``:
    the one defining its function, else named for it; the other files are ignored (not
    graded), the .py ones importable by it as helper modules."""
    from ..grade import classroom
    from ..grade.report import ignored_line

    files = [classroom._read(p, folder) for p in classroom.submissions_in(folder)]
    plan, ignored = classroom.pick(files, [exercise])
    if len(plan) > 1:  # attempts: the first by name is graded, the others said ignored
        ignored += [f"{f.rel} (another file for {exercise})" for f, _ in plan[1:]]
    note = [ignored_line(ignored)] if ignored else []
    if not plan:
        return None, note, None
    return plan[0][0], note, classroom.helpers_of(plan[0][0], files)


def _nothing_for(exercise: str, notes: list[str], seed: int, picked=None):
    """The report for a hand-in with no file for ``exercise``, or whose file cannot be read
    (a symlink is never followed): score 0, saying why."""
    from ..grade.results import CheckResult, Report

    why = picked.why if picked else f"no file defines {exercise}() or is named for it"
    mistake = picked.mistake if picked else "missing_function"
    check = CheckResult("submission", False, why)
    file = picked.rel if picked else ""
    return Report(exercise, False, 0.0, [check], [mistake], file=file, seed=seed, notes=notes)


def _unsandboxed_refusal(path: Path, a) -> str | None:
    """Why this single file must not be graded here, or None: it is other people's code
    (Gradescope's format, or a file another user owns), bwrap cannot run, and --no-sandbox was
    not given. Fails closed: the result written says so, and nothing of the file runs."""
    if a.no_sandbox or not (a.format == "gradescope" or path.stat().st_uid != os.geteuid()):
        return None
    from ..grade import bwrap

    why = bwrap.unavailable_reason()
    if why is None:
        return None
    return (
        f"refusing to grade another person's code without a sandbox ({why}); pass --no-sandbox "
        "to grade it with process isolation (run as root: an unprivileged uid of its own, every "
        "process of it killed before the result is written)"
    )


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
