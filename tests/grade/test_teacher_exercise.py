"""A teacher's own exercise file: graded like a built-in one, its mistakes named with its
hints, its points in every report format; a malformed file is one line and exit 2."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.grade import EXERCISES, bwrap, report
from attnlab.grade.grader import grade_source
from attnlab.grade.teacher import load

SANDBOX = [] if bwrap.unavailable_reason() is None else ["--no-sandbox"]
EXERCISE = """
import numpy as np
from attnlab.grade import Case

NAME = "row_normalise"
SIGNATURE = "row_normalise(x)"
CONTRACT = "x: (T, S) positive floats. Return (T, S): each row divided by its own sum."
RETURNS = ("y",)
SUMMARY = {"en": "divide each row by its sum", "ja": "各行をその和で割る"}


def reference(x):
    return x / x.sum(axis=1, keepdims=True)


def cases(rng):
    return [
        Case("fixed 2x3", {"x": np.array([[1.0, 2.0, 1.0], [3.0, 3.0, 6.0]])}, points=2),
        Case("random 4x5", {"x": rng.random((4, 5)) + 0.1}, points=3),
        Case("one column 3x1", {"x": rng.random((3, 1)) + 0.1}, points=5),
    ]


MISTAKES = {
    "divides_by_column_sums": {
        "version": lambda x: x / x.sum(axis=0, keepdims=True),
        "hint": {"en": "Divide each row by its own sum.", "ja": "各行をその行の和で割ってください。"},
    },
}
POINTS = {"inputs left unchanged": 0}
SHAPES = {"x": "T S", "y": "T S"}
DTYPES = ("float64",)
"""
RIGHT = "import numpy as np\n\ndef row_normalise(x):\n    return x / np.sum(x, -1, keepdims=True)\n"
WRONG = "def row_normalise(x):\n    return x / x.sum(axis=0, keepdims=True)\n"
# right but for one column, where it returns zeros: only the 5-point case fails
HALF = RIGHT.replace("    return", "    if x.shape[1] == 1:\n        return 0 * x\n    return")


@pytest.fixture
def exercise_file(tmp_path) -> Path:
    path = tmp_path / "rownorm.py"
    path.write_text(EXERCISE)
    yield path
    EXERCISES.pop("row_normalise", None)


def _grade(source: str, lang: str = "en"):
    return grade_source(source, "row_normalise", lang=lang, isolation="auto")


def test_a_teacher_exercise_grades_right_wrong_and_partly_right_by_its_points(exercise_file):
    load(exercise_file)
    right = _grade(RIGHT)
    assert right.passed and right.score == 1.0 and (right.points, right.max_points) == (10, 10)
    wrong = _grade(WRONG, "ja")
    assert not wrong.passed and wrong.score == 0.0  # the 0-point check it passes adds nothing
    assert wrong.mistakes == ["divides_by_column_sums"]
    assert wrong.hints["divides_by_column_sums"] == "各行をその行の和で割ってください。"
    half = _grade(HALF)
    failed = [c.name for c in half.checks if not c.passed]
    assert failed == ["one column 3x1"] and half.mistakes == []
    assert half.score == 0.5 and (half.points, half.max_points) == (5, 10)  # (2 + 3) / 10
    by = {c.name: c.points for c in half.checks if c.scored}
    assert by == {"fixed 2x3": 2, "random 4x5": 3, "one column 3x1": 5, "inputs left unchanged": 0}
    assert "[5 pts]" in str(half) and "5/10 pts" in str(half)


def test_every_format_carries_the_points(exercise_file):
    load(exercise_file)
    half = _grade(HALF)
    gs = report.gradescope(half)
    shares = {t["name"]: (t["score"], t["max_score"]) for t in gs["tests"]}
    assert shares["one column 3x1"] == (0.0, 50.0) and shares["random 4x5"] == (30.0, 30.0)
    assert gs["score"] == 50.0 and gs["extra_data"]["max_points"] == 10
    (row,) = csv.DictReader(io.StringIO(report.class_csv([half])))
    assert (row["score"], row["points"], row["max_points"]) == ("0.5000", "5", "10")
    suite = ET.fromstring(report.junit([half])).find("testsuite")
    props = suite.find("properties")
    assert {p.get("name"): p.get("value") for p in props}["points"] == "5/10"
    worth = {c.get("name"): c.find("properties/property") for c in suite.iter("testcase")}
    assert {n: p.get("value") for n, p in worth.items() if p is not None} == {
        "fixed 2x3": "2", "random 4x5": "3", "one column 3x1": "5", "inputs left unchanged": "0"
    }  # fmt: skip
    assert worth["valid Python"] is None  # a gate check, not scored: no points
    assert json.loads(report.to_json(half))["checks"][2]["points"] == 2


def test_the_command_line_uses_the_file_for_grade_start_and_autograder(exercise_file, tmp_path):
    sub = tmp_path / "hw.py"
    sub.write_text(WRONG)
    out = tmp_path / "r.json"
    argv = ["grade", str(sub), "--exercise-file", str(exercise_file), "--format", "json"]
    assert main([*argv, *SANDBOX, "-o", str(out)]) == 1
    assert json.loads(out.read_text())["mistakes"] == ["divides_by_column_sums"]
    start = tmp_path / "start.py"
    assert main(["exercise", "start", "row_normalise", str(start), "--exercise-file",
                 str(exercise_file)]) == 0  # fmt: skip
    assert "def row_normalise(x):" in start.read_text() and "each row divided" in start.read_text()
    ag = tmp_path / "ag"
    assert main(["exercise", "autograder", "row_normalise", "-o", str(ag), "--no-wheel",
                 "--exercise-file", str(exercise_file)]) == 0  # fmt: skip
    assert (ag / "teacher_exercise.py").read_text() == EXERCISE
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "row_normalise.py").write_text(HALF)
    env = {**os.environ, "AUTOGRADER": str(root), "ATTNLAB": f"{os.sys.executable} -m attnlab",
           "ATTNLAB_ALLOW_PROCESS_ISOLATION": "1"}  # fmt: skip
    run = subprocess.run([str(ag / "run_autograder")], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    res = json.loads((root / "results" / "results.json").read_text())
    assert res["score"] == 50.0 and len(res["tests"]) == 4


BROKEN = {
    "no reference": ("reference", "retired"),
    "a built-in name": ('"row_normalise"', '"softmax_rows"'),
    "a built-in mistake id": ('"divides_by_column_sums"', '"softmax_axis"'),
    "a reference that fails": ("return x / x.sum", "return x.nope / x.sum"),
    "not Python": ("NAME =", "NAME = ="),
    "a case off the contract's shapes": ('"y": "T S"', '"y": "T 3"'),
    "a case off the contract's dtypes": ('("float64",)', '("float32",)'),
    "a dtype that is not one": ('("float64",)', '("float65",)'),
}
EXPECTED = {
    "no reference": "defines no reference(...) function",
    "a built-in name": "NAME 'softmax_rows' is a built-in exercise",
    "a built-in mistake id": "mistake id 'softmax_axis' is a built-in id",
    "a reference that fails": "reference failed on case 'fixed 2x3'",
    "not Python": "cannot run it (SyntaxError",
    "a case off the contract's shapes": "case 'random 4x5' breaks the contract: y has shape "
    "(4, 5), SHAPES says (T, 3)",
    "a case off the contract's dtypes": "case 'fixed 2x3': x is float64, DTYPES allows "
    "('float32',)",
    "a dtype that is not one": "DTYPES: data type 'float65' not understood",
}


@pytest.mark.parametrize("what", list(BROKEN))
def test_a_malformed_exercise_file_is_one_line_and_exit_2(tmp_path, capsys, what):
    old, new = BROKEN[what]
    bad = tmp_path / "bad.py"
    bad.write_text(EXERCISE.replace(old, new, 1))
    (tmp_path / "hw.py").write_text(RIGHT)
    assert main(["grade", str(tmp_path / "hw.py"), "--exercise-file", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and EXPECTED[what] in err[0] and str(bad) in err[0], err
    assert "softmax_rows" in EXERCISES and EXERCISES["softmax_rows"].lesson is None
