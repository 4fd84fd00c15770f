"""attnlab works from an installed wheel, not only from the source tree.

Builds the wheel, installs it into a folder apart from the source, and runs from there (a cwd
outside the repository, that folder first on the path): a figure with CJK labels (the packaged
font is package data), lesson 2 exported in Chinese, which runs the lesson (the lesson sources
are package data), an explorer page (its template, script and style are package data) and a
sandboxed grading (the child harness travels as text). The exported script's own run, with
attnlab installed from a wheel into a fresh environment, is
tests/lessons/test_export.py::test_the_install_cell_installs_attnlab_from_the_wheel_beside_the_lesson.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    from attnlab.wheel import build_wheel  # (one build at a time in the checkout)

    wheel = build_wheel(tmp / "dist")
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


FORKS = Path(__file__).parent / "forks.py"
# a heatmap labelled in Chinese, written as PNG: its font is the packaged one where no CJK font
# is installed (what the wheel must carry), else the installed one (the packaged one behind it)
CJK_FIGURE = """
import numpy as np
from attnlab.viz import fonts, heatmap, save
fig = heatmap(np.full((5, 5), 0.2), list("床前明月光"), list("床前明月光"), title="注意力")
print(save(fig, "figs/zh.png"), fonts.find_cjk_font() or fonts.PACKAGED, sep="\\n")
"""


@pytest.fixture(scope="module")
def ran(installed, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    """Each test's commands, run from the installed wheel (that folder first on the path, a cwd
    outside the repository of their own) as forks of one process that imported torch and the
    wheel's attnlab once (tests/forks.py; with ATTNLAB_TEST_FORKS=0 each a fresh python)."""
    src = ROOT / "tests/grade/submissions/self_attention__pass__vectorized.py"
    code = (
        "import attnlab, attnlab.viz.fonts as f; "
        "print(attnlab.__file__); print(f.packaged_font_path().is_file())"
    )
    commands = {
        "data": ["-c", code],
        "plots": ["-c", CJK_FIGURE],
        "grade": ["-m", "attnlab", "grade", "mine.py", "--format", "json"],
        "export": ["-m", "attnlab", "lesson", "2", "--export", "l2", "--lang", "zh"],
        "explore": ["-m", "attnlab", "explore", "--playground", "-o", "pg.html"],
    }
    cwds = {key: tmp_path_factory.mktemp(key) for key in commands}
    (cwds["grade"] / "mine.py").write_bytes(src.read_bytes())
    jobs = [[key, args, str(cwds[key])] for key, args in commands.items()]
    env = {**os.environ, "PYTHONPATH": str(installed), "OMP_NUM_THREADS": "1"}
    forks = subprocess.run(
        [sys.executable, str(FORKS), "2"],
        input="".join(json.dumps(j) + "\n" for j in jobs),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwds["data"],
        timeout=600,
    )
    assert forks.returncode == 0, forks.stderr[-3000:]
    done = json.loads(forks.stdout)
    return {
        key: (subprocess.CompletedProcess(key, *done[key]), cwds.get(key, cwds["export"]))
        for key in commands
    }


def test_the_wheel_carries_its_data_and_is_what_runs(installed, ran):
    out, _ = ran["data"]
    where, has_font = out.stdout.split()
    assert where.startswith(str(installed)) and has_font == "True", out.stderr
    assert (installed / "attnlab/viz/assets/OFL.txt").is_file()


def test_plots_draw_cjk_from_the_wheel(ran):
    out, tmp_path = ran["plots"]
    assert out.returncode == 0, out.stderr
    assert "Glyph" not in out.stderr and "CJK" not in out.stderr, out.stderr
    path, font = out.stdout.splitlines()
    assert (tmp_path / path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from attnlab.viz import fonts

    if fonts.find_cjk_font() is None:  # no CJK font installed: the wheel's own drew it
        assert font == fonts.PACKAGED


def test_grading_from_the_wheel(ran):
    out, _ = ran["grade"]
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["passed"], out.stderr
    if os.environ.get("CI") == "true":
        assert report["isolation"] == "bwrap"


def test_lesson_export_from_the_wheel(ran):
    out, tmp_path = ran["export"]
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "l2/lesson2.ipynb").is_file()
    script = tmp_path / "l2/lesson2.py"
    text = script.read_text(encoding="utf-8")
    assert "注意力" in text
    from attnlab.lessons import runner, source

    titles = source.prose(2, "zh").titles  # every step, as the source tree has it
    assert all(titles[c.id] in text for c in runner.steps(2))


def test_explorer_page_from_the_wheel(ran):
    out, tmp_path = ran["explore"]
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "pg.html").read_text(encoding="utf-8")
    assert "function playground()" in text and '"mode":"playground"' in text  # assets inside
    assert "床前明月光" in text and "{js}" not in text and "{data}" not in text
    assert "url(data:font/otf;base64," in text  # its CJK glyphs, cut from the packaged font


def test_builds_in_one_checkout_take_turns(tmp_path, monkeypatch):
    """pip builds in the checkout's build/ folder: three builds at once collided there (two
    failed). Each build runs while it holds the checkout's lock; another waits."""
    import fcntl

    from attnlab import wheel

    root = wheel.source_root()
    if root is None:
        pytest.skip("attnlab runs from a wheel here: it builds no wheel")
    held = []

    def pip(cmd, **kw):  # instead of the build: is the lock taken while it runs?
        fd = os.open(root / wheel.LOCK, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(False)
        except BlockingIOError:
            held.append(True)
        finally:
            os.close(fd)
        (Path(cmd[cmd.index("-w") + 1]) / f"attnlab-{wheel.__version__}-py3-none-any.whl").touch()
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(wheel.subprocess, "run", pip)
    monkeypatch.setattr(wheel, "CACHE", str(tmp_path / "kept"))  # nothing kept: a build runs
    tmp_path.joinpath("d").mkdir()
    assert wheel.build_wheel(tmp_path / "d").is_file()
    assert held == [True]


def test_a_wheel_is_built_again_only_when_what_it_is_made_of_changed(tmp_path, monkeypatch):
    """The last wheel built is kept under a hash of its sources and copied while they are
    unchanged; a changed or added source, the project's README or a builder's version builds
    it again; bytecode does not; only the newest is kept, and a failed build keeps nothing."""
    from attnlab import wheel

    root = tmp_path / "checkout"
    (root / "src/attnlab/__pycache__").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'attnlab'\n")
    (root / "README.md").write_text("read me\n")
    (root / "src/attnlab/a.py").write_text("x = 1\n")
    monkeypatch.setattr(wheel, "source_root", lambda: root)
    builds: list[int] = []

    def pip(cmd, **kw):  # a stand-in build: a wheel whose bytes say which build made it
        builds.append(len(builds) + 1)
        out = Path(cmd[cmd.index("-w") + 1]) / f"attnlab-{wheel.__version__}-py3-none-any.whl"
        out.write_bytes(f"build {builds[-1]}".encode())
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(wheel.subprocess, "run", pip)

    def built(change=lambda: None) -> bytes:
        change()
        return wheel.build_wheel(tmp_path / f"out{len(list(tmp_path.iterdir()))}").read_bytes()

    assert built() == b"build 1"
    assert built() == b"build 1"  # nothing changed: the kept wheel, pip not run
    assert built(lambda: (root / "src/attnlab/__pycache__/a.pyc").write_bytes(b"1")) == b"build 1"
    assert built(lambda: (root / "src/attnlab/a.py").write_text("x = 2\n")) == b"build 2"
    assert built(lambda: (root / "src/attnlab/data.txt").write_text("new\n")) == b"build 3"
    assert built(lambda: (root / "README.md").write_text("read me too\n")) == b"build 4"
    real = wheel.metadata.version
    monkeypatch.setattr(wheel.metadata, "version", lambda n: "0.0" if n == "wheel" else real(n))
    assert built() == b"build 5"
    assert len(list((root / wheel.CACHE).iterdir())) == 1  # only the newest is kept

    fail = lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "no compiler")  # noqa: E731
    monkeypatch.setattr(wheel.subprocess, "run", fail)
    with pytest.raises(UserError, match="no compiler"):
        built(lambda: (root / "src/attnlab/a.py").write_text("x = 3\n"))
    assert not (root / wheel.CACHE).exists() or not list((root / wheel.CACHE).iterdir())
    monkeypatch.setattr(wheel.subprocess, "run", pip)
    assert built() == b"build 6"  # built, not a leftover of the failed one
