"""Files that appear whole or not at all: write to a temp file in the same folder, then rename.

A crash, a full disk or Ctrl-C mid-write leaves the previous file (or none) in place, never a
half-written one, and no temp file behind. New files get the usual permissions (0666 less the
umask), not mkstemp's 0600.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import UserError


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp_path)`` to fill a temp file beside ``path``, then rename it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


KINDS = ("folder", "file", "file or folder")


def check_output(path: str | os.PathLike, flag: str, kind: str = "folder", what: str = "") -> Path:
    """Say now, before any work, whether ``path`` can be what a command writes: a folder to
    write into, a file to write, or (``"file or folder"``) a file or a folder to put it in.
    Nothing is left behind (an empty folder is made in it and removed at once: the one test
    that holds for root, whom ``os.access`` lets write even in ``/proc``).

    Refused, as one ``UserError`` line naming ``flag``, the path and ``what`` was expected: a
    file where a folder is wanted and the reverse, a path inside a file (``afile/sub``), a
    folder this user cannot write in (the path's own, or the nearest one that exists, where it
    would be made), and a link that leads nowhere. Returns ``path`` as a ``Path``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    p = Path(path)
    what = what or {"folder": "a folder", "file": "a file name"}.get(kind, "a file or a folder")

    def refuse(why: str) -> UserError:
        return UserError(f"{flag} {str(path)!r}: {why}, expected {what}")

    if not str(path):
        raise refuse("an empty path")
    if p.is_symlink() and not p.exists():
        raise refuse("a link that leads nowhere")
    if kind == "folder" and p.exists() and not p.is_dir():
        raise refuse("a file")
    if kind == "file" and p.is_dir():
        raise refuse("a folder")
    where = p if p.is_dir() else _nearest_existing(p.parent)
    if not where.is_dir():
        raise refuse(f"{str(where)!r} is a file (a file stands where a folder is needed)")
    if not os.access(where, os.W_OK | os.X_OK):
        raise refuse(f"this user cannot write in {str(where)!r}")
    try:  # root passes os.access everywhere, /proc included: try making something there
        os.rmdir(tempfile.mkdtemp(prefix=".attnlab-check-", dir=where))
    except OSError as e:
        raise refuse(f"nothing can be made in {str(where)!r} ({e.strerror or e})") from None
    return p


def _nearest_existing(folder: Path) -> Path:
    """``folder`` or the nearest of its parents that exists (where ``mkdir -p`` would start)."""
    folder = Path(os.path.abspath(folder))
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    return folder
