"""The Gradescope image: attnlab without torch grades right and wrong files, and a missing
grader fails closed (a results.json that says so, score 0, a non-zero exit)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import attnlab
from attnlab.cli import main

CORPUS = Path(__file__).parent / "submissions"
SRC = Path(attnlab.__file__).resolve().parents[1]
# what `pip install --no-deps attnlab.whl numpy` leaves out: importing any of these must fail
LEFT_OUT = ("torch", "matplotlib", "tqdm", "threadpoolctl", "rich", "nbformat", "jupytext")


def _shimmed_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python cannot import torch nor the other non-grading dependencies
    (a sitecustomize that sets them to None in sys.modules: `import torch` raises)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    body = f"import sys\nfor m in {LEFT_OUT!r}:\n    sys.modules[m] = None\n"
    (shim / "sitecustomize.py").write_text(body)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(SRC)])}


def test_setup_sh_installs_attnlab_without_its_dependencies_and_numpy_alone(tmp_path):
    out = tmp_path / "ag"
    assert main(["exercise", "autograder", "causal_mask", "-o", str(out), "--no-wheel"]) == 0
    pips = [ln for ln in (out / "setup.sh").read_text().splitlines() if "pip install" in ln]
    wheel = [ln for ln in pips if "attnlab-*.whl" in ln]
    assert len(wheel) == 1 and "--no-deps" in wheel[0]
    others = [ln for ln in pips if ln not in wheel and "--upgrade pip" not in ln]
    assert others and all("numpy" in ln for ln in others)
    assert not any(dep in ln for ln in pips for dep in LEFT_OUT)


def test_attnlab_grade_runs_where_torch_cannot_be_imported(tmp_path):
    env = _shimmed_env(tmp_path)
    probe = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True)
    assert (
        probe.returncode != 0 and b"import of torch halted" in probe.stderr
    )  # the shim is in force
    klass = tmp_path / "class"
    for who, name in (("ann", "causal_mask__pass__tril.py"),
                      ("ben", "causal_mask__mask_orientation__triu.py")):  # fmt: skip
        (klass / who).mkdir(parents=True)
        (klass / who / "causal_mask.py").write_text((CORPUS / name).read_text())
    cmd = [sys.executable, "-m", "attnlab", "grade", str(klass), "--format", "csv", "--no-sandbox"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr  # one file fails: exit 1, not a crash
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO(run.stdout))}
    assert rows["ann/causal_mask.py"]["passed"] == "1"
    assert rows["ann/causal_mask.py"]["score"] == "1.0000"
    assert rows["ben/causal_mask.py"]["passed"] == "0"
    assert rows["ben/causal_mask.py"]["mistakes"] == "mask_orientation"


def _autograder(tmp_path: Path, attnlab_cmd: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "ag"
    assert main(["exercise", "autograder", "causal_mask", "-o", str(out), "--no-wheel"]) == 0
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "causal_mask.py").write_text(
        (CORPUS / "causal_mask__pass__tril.py").read_text()
    )
    env = {**os.environ, "AUTOGRADER": str(root), "ATTNLAB": attnlab_cmd}
    run = subprocess.run(
        [str(out / "run_autograder")], env=env, capture_output=True, text=True, timeout=120
    )
    return run, json.loads((root / "results" / "results.json").read_text())


def test_run_autograder_fails_closed_when_attnlab_is_not_installed(tmp_path):
    run, res = _autograder(tmp_path, str(tmp_path / "venv" / "bin" / "attnlab"))
    assert run.returncode != 0
    assert res["score"] == 0 and res["tests"] == []
    assert res["output"].startswith("NOT GRADED: the grader is not installed")


def test_run_autograder_fails_closed_when_the_grader_writes_nothing(tmp_path):
    broken = tmp_path / "broken_attnlab"  # answers --version, then dies before a result
    broken.write_text('#!/usr/bin/env bash\n[ "$1" = --version ] && exit 0\nexit 3\n')
    broken.chmod(0o755)
    run, res = _autograder(tmp_path, str(broken))
    assert run.returncode != 0 and res["score"] == 0
    assert "exited with 3 without writing a result" in res["output"]
