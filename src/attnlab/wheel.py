"""attnlab's own wheel, built from the source checkout it runs from, for places that must
install it where no package index has it (an exported notebook, a Gradescope image)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from . import __version__
from .errors import UserError

LOCK = "build/.wheel.lock"  # in the source checkout: held while a build runs


def source_root() -> Path | None:
    """The source checkout this attnlab runs from (an editable install), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def build_wheel(folder: Path) -> Path:
    """attnlab's wheel, built from its source checkout into ``folder`` (no network:
    ``pip wheel --no-deps --no-build-isolation --no-index``)."""
    root = source_root()
    if root is None:
        raise UserError(
            "attnlab's wheel is built from its source checkout, and this attnlab was installed "
            "without one; copy the wheel you installed it from instead"
        )
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    cmd = [*pip, "--no-index", "-q", "-w", str(folder), str(root)]
    with _one_build_at_a_time(root):
        done = subprocess.run(cmd, capture_output=True, text=True)
    wheel = Path(folder) / f"attnlab-{__version__}-py3-none-any.whl"
    if done.returncode != 0 or not wheel.is_file():
        raise UserError(f"could not build attnlab's wheel: {done.stderr.strip()[-500:]}")
    return wheel


@contextlib.contextmanager
def _one_build_at_a_time(root: Path) -> Iterator[None]:
    """pip builds in the checkout's own build/ folder: two builds at once (two exports, the
    tests on two cores) collided there ("File exists: build/bdist.linux-x86_64/wheel/...").
    Held on a lock file in that folder."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one build at a time is the user's to keep
        yield
        return
    (root / LOCK).parent.mkdir(exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (and the lock with it)
