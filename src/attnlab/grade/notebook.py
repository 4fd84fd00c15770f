"""Read a learner's code from a .py file or a Jupyter notebook."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

MAX_BYTES = 4 * 2**20  # a submission larger than this is refused


def notebook_source(text: str) -> str:
    """The code cells of an .ipynb in order; IPython magics (%, %%) and shell lines (!) dropped."""
    nb = json.loads(text)
    chunks = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        lines = ("".join(src) if isinstance(src, list) else src).splitlines()
        if lines and lines[0].lstrip().startswith("%%"):
            continue  # a cell magic (%%time, %%bash): the whole cell is not Python
        kept = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines]
        chunks.append("\n".join(kept))
    return "\n\n".join(chunks) + "\n"


def read_submission(path: Path, *, follow_symlinks: bool = True) -> str:
    """The Python source of a submission, read once.

    Raises ValueError for anything but a regular file of at most 4 MiB (a FIFO or device is never
    opened for blocking reads), and for a notebook that is not JSON; OSError if it cannot be read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"{path}: not a regular file")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: larger than {MAX_BYTES // 2**20} MiB")
    raw = data.decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            return notebook_source(raw)
        except (json.JSONDecodeError, AttributeError, TypeError) as e:
            raise ValueError(f"{path}: not a readable Jupyter notebook ({e})") from None
    return raw
