"""attnlab's own wheel, built from the source checkout it runs from, for places that must
install it where no package index has it (an exported notebook, a Gradescope image)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from . import __version__
from .errors import UserError

LOCK = "build/.wheel.lock"  # in the source checkout: held while a build runs
CACHE = "build/wheels"  # in the source checkout: the last wheel built, under its sources' hash
# what a wheel is made of, besides src/: the project's metadata and the files setuptools adds
TOP_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in", "README.md")
TOP_GLOBS = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")
BUILDERS = ("setuptools", "wheel", "pip")  # their versions are part of the key too


def source_root() -> Path | None:
    """The source checkout this attnlab runs from (an editable install), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def build_wheel(folder: Path) -> Path:
    """attnlab's wheel, built from its source checkout into ``folder`` (no network:
    ``pip wheel --no-deps --no-build-isolation --no-index``). The wheel last built is kept in
    the checkout (``CACHE``, under a hash of every file the wheel is made of and the builders'
    versions) and copied while those are unchanged: a build takes seconds of CPU."""
    root = source_root()
    if root is None:
        raise UserError(
            "attnlab's wheel is built from its source checkout, and this attnlab was installed "
            "without one; copy the wheel you installed it from instead"
        )
    name = f"attnlab-{__version__}-py3-none-any.whl"
    Path(folder).mkdir(parents=True, exist_ok=True)
    with _one_build_at_a_time(root):
        kept = root / CACHE / sources_hash(root) / name
        if not kept.is_file():
            _build(root, kept.parent, name)
        shutil.copyfile(kept, Path(folder) / name)
    return Path(folder) / name


def _build(root: Path, into: Path, name: str) -> None:
    """pip builds the wheel into a fresh folder, which then becomes ``into``, the only one
    kept under ``CACHE`` (a failed build leaves nothing there)."""
    shutil.rmtree(into.parent, ignore_errors=True)
    fresh = into.with_name(into.name + ".part")
    fresh.mkdir(parents=True)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    cmd = [*pip, "--no-index", "-q", "-w", str(fresh), str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not (fresh / name).is_file():
        shutil.rmtree(fresh, ignore_errors=True)
        raise UserError(f"could not build attnlab's wheel: {done.stderr.strip()[-500:]}")
    fresh.rename(into)


def sources_hash(root: Path) -> str:
    """A hash of what a wheel built from ``root`` holds: the paths and bytes of every file it
    is made of (``_made_of``) and the versions of the tools that build it."""
    h = hashlib.sha256()
    for p in sorted(_made_of(root)):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    for tool in BUILDERS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            h.update(f"{tool}=={metadata.version(tool)}\0".encode())
    return h.hexdigest()[:16]


def _made_of(root: Path) -> list[Path]:
    """Every file under src/ (compiled bytecode and egg-info aside) and the project files
    beside it (``TOP_FILES``, ``TOP_GLOBS``)."""
    tops = [root / f for f in TOP_FILES] + [p for g in TOP_GLOBS for p in root.glob(g)]
    src = [p for p in (root / "src").rglob("*") if p.is_file() and not _derived(root, p)]
    return [p for p in tops if p.is_file()] + src


def _derived(root: Path, path: Path) -> bool:
    """Whether ``path`` is made from the sources (bytecode, egg-info), not a source."""
    parts = path.relative_to(root).parts
    return (
        path.suffix == ".pyc"
        or "__pycache__" in parts
        or any(part.endswith(".egg-info") for part in parts)
    )


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
