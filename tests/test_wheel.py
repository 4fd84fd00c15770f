"""attnlab works from an installed wheel, not only from the source tree.

Builds the wheel, installs it into a folder apart from the source, and runs from there (a cwd
outside the repository, that folder first on the path): a lesson with CJK plots (the packaged
font is package data), a lesson exported and its script run (the lesson sources are package
data), an explorer page (its template, script and style are package data) and a sandboxed
grading (the child harness travels as text).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import SHORT_TIMED

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip"]
    build = subprocess.run(
        [
            *pip,
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp / "dist").glob("attnlab-*.whl")
    site = tmp / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_carries_its_data_and_is_what_runs(installed, tmp_path):
    code = (
        "import attnlab, attnlab.viz.fonts as f; "
        "print(attnlab.__file__); print(f.packaged_font_path().is_file())"
    )
    out = _run(installed, tmp_path, "-c", code)
    where, has_font = out.stdout.split()
    assert where.startswith(str(installed)) and has_font == "True", out.stderr
    assert (installed / "attnlab/viz/assets/OFL.txt").is_file()


def test_lesson_plots_draw_cjk_from_the_wheel(installed, tmp_path):
    out = _run(installed, tmp_path, "-m", "attnlab", "lesson", "1", "--plots", "figs")
    assert out.returncode == 0, out.stderr
    assert "Glyph" not in out.stderr and "CJK" not in out.stderr, out.stderr
    assert len(list((tmp_path / "figs").glob("*.png"))) >= 3


def test_grading_from_the_wheel(installed, tmp_path):
    src = ROOT / "tests/grade/submissions/self_attention__pass__vectorized.py"
    (tmp_path / "mine.py").write_bytes(src.read_bytes())
    out = _run(installed, tmp_path, "-m", "attnlab", "grade", "mine.py", "--format", "json")
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["passed"], out.stderr
    if os.environ.get("CI") == "true":
        assert report["isolation"] == "bwrap"


def test_lesson_export_from_the_wheel(installed, tmp_path):
    out = _run(
        installed, tmp_path, "-m", "attnlab", "lesson", "1", "--export", "l1", "--lang", "zh"
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "l1/lesson1.ipynb").is_file()
    script = tmp_path / "l1/lesson1.py"
    assert "注意力" in script.read_text(encoding="utf-8")
    # as a learner on a slow machine would: shorter lengths for the timing exercise
    setup = re.compile(r"^TIMED = \(.*?\)", re.M)
    text, n = setup.subn(f"TIMED = {SHORT_TIMED}", script.read_text("utf-8"), count=1)
    assert n == 1
    script.write_text(text, encoding="utf-8")
    ran = _run(installed, tmp_path / "l1", "lesson1.py")
    assert ran.returncode == 0, ran.stderr
    assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in ran.stdout


def test_explorer_page_from_the_wheel(installed, tmp_path):
    out = _run(installed, tmp_path, "-m", "attnlab", "explore", "--playground", "-o", "pg.html")
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "pg.html").read_text(encoding="utf-8")
    assert "function playground()" in text and '"mode":"playground"' in text  # assets inside
    assert "床前明月光" in text and "{js}" not in text and "{data}" not in text
