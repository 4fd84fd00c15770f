"""Read a learner's code from a .py file or a Jupyter notebook."""

from __future__ import annotations

import json
from pathlib import Path


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


def read_submission(path: Path) -> str:
    """The Python source of a submission; raises ValueError for a notebook that is not JSON."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            return notebook_source(raw)
        except (json.JSONDecodeError, AttributeError, TypeError) as e:
            raise ValueError(f"{path}: not a readable Jupyter notebook ({e})") from None
    return raw
