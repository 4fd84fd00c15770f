"""``attnlab exercise``: list the exercises or write a starter file."""

from __future__ import annotations

import shutil

from ..errors import UserError
from ..i18n import Text
from ..tables import text_table
from ._args import add_lang, check_outputs

NAME = "exercise"
HEADER = (  # exercise list's columns, in the learner's language
    Text("exercise", "課題", "练习"),
    Text("lesson", "レッスン", "课"),
    Text("what it asks", "内容", "内容"),
)


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="list the exercises, write a starter file or a Gradescope autograder",
        description="'attnlab exercise list' shows the exercises; 'attnlab exercise start NAME "
        "[PATH]' writes a starter file with the contract and TODOs (never overwrites without "
        "--force); 'attnlab exercise autograder NAME -o DIR' writes a Gradescope autograder "
        "folder (setup.sh, run_autograder) that grades one submission into results.json.",
    )
    p.add_argument("action", choices=["list", "start", "autograder"])
    p.add_argument("name", nargs="?", help="exercise name, for start and autograder")
    p.add_argument("file", nargs="?", help="where to write the starter (default NAME.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument(
        "-o",
        "--output",
        "--out",
        dest="out",
        metavar="PATH",
        help="start: the starter file to write (as FILE); autograder: the folder to write",
    )
    p.add_argument(
        "--no-wheel",
        action="store_true",
        help="autograder: leave out attnlab's wheel (you will put one beside setup.sh yourself)",
    )
    p.add_argument(
        "--exercise-file",
        metavar="FILE.py",
        help="the teacher's own exercise (a Python file declaring it, see the README): listed, "
        "started and made into an autograder like the built-in ones (NAME may be left out)",
    )
    add_lang(p, "summaries and starter")
    p.set_defaults(run=run)


def run(a) -> int:
    out_kind = "folder" if a.action == "autograder" else "file or folder"  # start: as FILE
    check_outputs((a.file, "FILE", "file or folder"), (a.out, "-o", out_kind))
    from ..grade import EXERCISES, write_starter

    if a.exercise_file:
        from ..grade.teacher import load

        name = load(a.exercise_file).name
        if a.name is not None and a.name != name and a.action != "list":
            raise UserError(f"NAME {a.name!r}: the --exercise-file declares {name!r}")
        a.name = name
    if a.action == "list":
        print(_listing(EXERCISES.values(), a.lang))
        return 0
    if a.name is None:
        raise UserError("exercise start needs a NAME (see 'attnlab exercise list')")
    if a.name not in EXERCISES:
        raise UserError(f"unknown exercise {a.name!r}; choose one of {', '.join(EXERCISES)}")
    if a.action == "autograder":
        from ..grade.autograder import write_autograder

        if a.out is None:
            raise UserError("exercise autograder needs -o DIR, the folder to write")
        written = write_autograder(
            a.name, a.out, a.lang, wheel=not a.no_wheel, exercise_file=a.exercise_file
        )
        for path in written:
            print(f"wrote {path}")
        print("zip the files of that folder and upload it as the Gradescope autograder")
        return 0
    if a.out is not None and a.file is not None and a.out != a.file:
        raise UserError(f"FILE {a.file!r} and -o {a.out!r}: give the starter's path once")
    try:
        written = write_starter(a.name, a.out or a.file, a.force, a.lang)
    except (FileExistsError, IsADirectoryError) as e:
        raise UserError(str(e)) from None
    print(f"wrote {written}\nfill in the TODO, then run: attnlab grade {written}")
    return 0


def _listing(exercises, lang: str) -> str:
    """One row per exercise: its name, its lesson and what it asks, fitted to the terminal."""
    rows = [[ex.name, ex.lesson or "", ex.summary(lang)] for ex in exercises]
    width = shutil.get_terminal_size().columns  # 80 when not a terminal
    return text_table([h(lang) for h in HEADER], rows, width=width)
