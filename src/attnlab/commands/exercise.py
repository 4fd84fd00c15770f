"""``attnlab exercise``: list the exercises or write a starter file."""

from __future__ import annotations

from ..errors import UserError
from ._args import add_lang, check_outputs

NAME = "exercise"


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
        "-o", "--output", "--out", dest="out", metavar="DIR", help="autograder: the folder to write"
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
    check_outputs((a.file, "FILE", "file or folder"), (a.out, "-o", "folder"))
    from ..grade import EXERCISES, write_starter

    if a.exercise_file:
        from ..grade.teacher import load

        name = load(a.exercise_file).name
        if a.name is not None and a.name != name and a.action != "list":
            raise UserError(f"NAME {a.name!r}: the --exercise-file declares {name!r}")
        a.name = name
    if a.action == "list":
        width = max(map(len, EXERCISES))
        for ex in EXERCISES.values():
            where = f"  (lesson {ex.lesson})" if ex.lesson else ""
            print(f"{ex.name.ljust(width)}  {ex.summary(a.lang)}{where}")
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
    try:
        written = write_starter(a.name, a.file, a.force, a.lang)
    except (FileExistsError, IsADirectoryError) as e:
        raise UserError(str(e)) from None
    print(f"wrote {written}; fill in the TODO, then run: attnlab grade {written}")
    return 0
