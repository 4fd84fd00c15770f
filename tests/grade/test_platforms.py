"""Gradescope: results.json per their documented fields, and an autograder folder that works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from attnlab import __version__
from attnlab.cli import main
from attnlab.grade import grade_file
from attnlab.grade.report import gradescope

CORPUS = Path(__file__).parent / "submissions"
TEST_FIELDS = {"name", "score", "max_score", "status", "output", "visibility"}


def _valid(results: dict) -> None:
    assert isinstance(results["score"], float | int) and isinstance(results["tests"], list)
    assert results["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    for t in results["tests"]:
        assert TEST_FIELDS <= set(t), t
        assert t["status"] in ("passed", "failed") and 0 <= t["score"] <= t["max_score"]
    assert abs(sum(t["max_score"] for t in results["tests"]) - 100) < 1e-6
    assert abs(results["score"] - sum(t["score"] for t in results["tests"])) < 1e-3


def test_gradescope_results_for_a_right_a_wrong_and_a_broken_submission():
    right = gradescope(grade_file(CORPUS / "self_attention__pass__vectorized.py", seed=1))
    _valid(right)
    assert right["score"] == 100 and all(t["status"] == "passed" for t in right["tests"])
    wrong = gradescope(grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py", seed=1))
    _valid(wrong)
    assert 0 <= wrong["score"] < 100 and "missing_scale" in wrong["output"]
    broken = gradescope(grade_file(CORPUS / "self_attention__syntax_error__missing_colon.py"))
    _valid(broken)
    assert broken["score"] == 0 and broken["tests"][0]["status"] == "failed"


def test_gradescope_format_is_one_file_only(tmp_path, capsys):
    assert main(["grade", str(CORPUS), "--format", "gradescope"]) == 2
    assert "one file" in capsys.readouterr().err


def test_the_autograder_folder_grades_a_submission_into_results_json(tmp_path):
    out = tmp_path / "ag"
    assert main(["exercise", "autograder", "self_attention", "-o", str(out)]) == 0
    for name in ("setup.sh", "run_autograder"):
        assert os.access(out / name, os.X_OK)
    # attnlab is not on PyPI: setup.sh installs the wheel written beside it, nothing else
    assert [w.name for w in out.glob("attnlab-*.whl")] == [
        f"attnlab-{__version__}-py3-none-any.whl"
    ]
    assert "attnlab==" not in (out / "setup.sh").read_text()
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    shutil.copy(CORPUS / "self_attention__mask_orientation__triu.py", root / "submission" / "hw.py")
    attnlab = f"{sys.executable} -m attnlab"
    env = {**os.environ, "AUTOGRADER": str(root), "ATTNLAB": attnlab}
    run = subprocess.run([str(out / "run_autograder")], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    _valid(results)
    assert results["score"] < 100 and "mask_orientation" in results["output"]
    (root / "submission" / "hw.py").unlink()  # nothing submitted: a zero, not a crash
    subprocess.run([str(out / "run_autograder")], env=env, check=True)
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 0
