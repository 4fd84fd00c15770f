"""Helper modules handed in beside a submission: importable inside the sandbox, held to the
same imports, never graded as an exercise, named in the report (class mode and Gradescope)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.grade import bwrap, grade_class

ISOLATION = "bwrap" if bwrap.unavailable_reason() is None else "process"
MAIN = """import numpy as np
from utils import row_softmax


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    w = row_softmax(scores)
    return w @ V, w
"""
RIGHT = """import numpy as np


def row_softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
"""
WRONG = RIGHT.replace("axis=1, keepdims=True)\n", "axis=0, keepdims=True)\n")  # the sum only
TORCH = "import torch\n" + RIGHT
SNEAKY = "import importlib\n" + RIGHT.replace(
    "    e = np", "    importlib.import_module('tor' + 'ch')\n    e = np"
)
TAMPER = RIGHT + "\nnp.allclose = lambda *a, **k: True\n"


def _grade(tmp_path: Path, utils: str, extra: dict[str, str] | None = None):
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    files = {"self_attention.py": MAIN, "utils.py": utils, **(extra or {})}
    for name, text in files.items():
        (folder / "ann" / name).write_text(text)
    done = grade_class(folder, ["self_attention"], isolation=ISOLATION, allow_unsandboxed=True)
    (r,) = done.reports
    return r, done


def test_a_helper_module_is_imported_and_never_graded(tmp_path):
    r, done = _grade(tmp_path, RIGHT, {"aa_scratch.py": "import torch\nprint(torch)\n"})
    assert r.file == "ann/self_attention.py" and r.passed and r.score == 1.0, r.checks
    assert r.isolation == ISOLATION
    assert "helper modules used: utils.py (import utils)" in r.notes[0]
    assert "importable, not imported: aa_scratch.py" in r.notes[0]  # its torch: never looked at
    assert sorted(done.ignored) == [
        "ann/aa_scratch.py (a helper module, importable as aa_scratch; not graded)",
        "ann/utils.py (a helper module, importable as utils; not graded)",
    ]


def test_a_wrong_helper_makes_a_wrong_submission(tmp_path):
    r, _ = _grade(tmp_path, WRONG)
    assert not r.passed and r.score < 1.0
    assert "softmax_axis" in r.mistakes  # the helper's own bug, named as the submission's


@pytest.mark.parametrize("utils", [TORCH, SNEAKY], ids=["static", "at_run_time"])
def test_a_helper_that_imports_torch_is_a_forbidden_import(tmp_path, utils):
    r, _ = _grade(tmp_path, utils)
    assert not r.passed and r.score == 0.0
    assert r.mistakes[0] == "forbidden_import"
    text = "; ".join(c.message for c in r.checks)
    assert "torch" in text


def test_a_helper_that_tampers_with_numpy_is_caught(tmp_path):
    r, _ = _grade(tmp_path, TAMPER)
    assert "grader_tampering" in r.mistakes
    (check,) = [c for c in r.checks if c.name == "leaves NumPy and the grader alone"]
    assert "numpy.allclose" in check.message and not check.passed


def test_a_helper_named_like_the_standard_library_is_not_served(tmp_path):
    r, done = _grade(tmp_path, RIGHT, {"random.py": "raise SystemExit('shadowed')\n"})
    assert r.passed  # not served: an `import random` anywhere gets the standard library's
    assert "ann/random.py (defines no exercise function)" in done.ignored


def test_gradescope_folder_mode_imports_the_helper(tmp_path):
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "self_attention.py").write_text(MAIN)
    (sub / "utils.py").write_text(RIGHT)
    out = tmp_path / "results.json"
    argv = ["grade", str(sub), "--exercise", "self_attention", "--format", "gradescope", "-o",
            str(out), *([] if ISOLATION == "bwrap" else ["--no-sandbox"])]  # fmt: skip
    assert main(argv) == 0
    res = json.loads(out.read_text())
    assert res["score"] == 100.0
    assert "helper modules used: utils.py (import utils)" in res["output"]
    assert "utils.py (a helper module, importable as utils; not graded)" in res["output"]


def test_a_helper_that_does_not_parse_is_named_in_a_syntax_error(tmp_path):
    r, _ = _grade(tmp_path, "def row_softmax(s)\n    return s\n")
    assert r.mistakes == ["syntax_error"] and r.score == 0.0
    assert any("helper utils.py, line 1" in c.message for c in r.checks)
