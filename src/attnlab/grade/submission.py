"""Read a learner's code from a .py file or a Jupyter notebook."""

from __future__ import annotations

import ast
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 4 * 2**20  # a submission larger than this is refused
SUFFIXES = (".py", ".ipynb")  # what a learner hands in
SURROGATE = re.compile("[\ud800-\udfff]")


PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun")  # their body is Python
PRELUDE = "display = print  # IPython's display(), outside IPython\n"


@dataclass
class Submission:
    """A submission's Python source; for a notebook also where each line came from."""

    code: str
    cells: list[tuple[int, int]] = field(default_factory=list)  # per code line: (cell, line)
    notes: list[str] = field(default_factory=list)  # cells that were not run, and why

    def where(self, line: int) -> str:
        """``line N`` of the joined source as the learner sees it: ``cell K, line M``."""
        if not self.cells or not 1 <= line <= len(self.cells):
            return f"line {line}"
        cell, at = self.cells[line - 1]
        return f"cell {cell}, line {at}" if cell else f"line {line}"

    def relabel(self, text: str) -> str:
        """Every ``line N`` in a message or traceback, as ``cell K, line M``."""
        if not self.cells:
            return text
        return re.sub(r"\bline (\d+)", lambda m: self.where(int(m.group(1))), text)


def parse_notebook(text: str) -> Submission:
    """The code cells of an .ipynb joined in order, with a map back to (cell, line).

    Line magics (``%matplotlib``) and shell lines (``!pip``) become blank lines; cells under a
    timing or capture magic (``%%time``) keep their Python body; other cell magics (``%%bash``)
    are left out with a note; ``display`` works as ``print``. Cells are numbered from 1 in the
    notebook's order, markdown cells included, as they appear on screen.
    """
    nb = json.loads(text)
    lines, where, notes = PRELUDE.splitlines(), [(0, 0)], []
    for number, cell in enumerate(nb.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        body = ("".join(src) if isinstance(src, list) else src).splitlines()
        first = body[0].strip() if body else ""
        offset = 0
        if first.startswith("%%"):
            if first.split()[0] not in PYTHON_CELL_MAGICS:
                notes.append(f"cell {number} not run: {first.split()[0]} is an IPython cell magic")
                continue
            body, offset = body[1:], 1
        for k, ln in enumerate(body, start=1 + offset):
            lines.append("" if ln.lstrip().startswith(("%", "!")) else ln)
            where.append((number, k))
        lines.append("")
        where.append((number, len(body) + offset + 1))
    return Submission("\n".join(lines) + "\n", where, notes)


def notebook_source(text: str) -> str:
    """The Python source of a notebook (see ``parse_notebook``)."""
    return parse_notebook(text).code


def read_submission(path: Path, *, follow_symlinks: bool = True) -> Submission:
    """The Python source of a submission, read once (for a notebook, with its cell map).

    Raises ValueError, with a message that says why, for anything but a regular file of at most
    4 MiB (a FIFO or device is never opened for blocking reads), a notebook that is not JSON or
    not shaped like one, text that is not valid Unicode (a lone surrogate), and code nested too
    deeply for Python to read; OSError if it cannot be read. Each is one file's failure.
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
    sub = Submission(raw)
    if path.suffix == ".ipynb":
        try:
            sub = parse_notebook(raw)
        except RecursionError:
            raise ValueError(f"{path}: a notebook nested too deeply to read") from None
        except (ValueError, AttributeError, TypeError, KeyError) as e:
            raise ValueError(f"{path}: not a readable Jupyter notebook ({str(e)[:200]})") from None
    _check_readable(sub.code, path)
    return sub


def _check_readable(code: str, path: Path) -> None:
    """Refuse what Python's own parser cannot take without failing itself: lone surrogates
    (from a notebook's JSON escapes) and nesting past its stack (RecursionError, MemoryError).
    A plain syntax error is left for the grader, which reports it as one."""
    bad = SURROGATE.search(code)
    if bad:
        raise ValueError(
            f"{path}: holds {bad.group()!a}, a lone surrogate, which is not valid Unicode"
        )
    try:
        compile(code, str(path), "exec", ast.PyCF_ONLY_AST)
    except (RecursionError, MemoryError) as e:
        raise ValueError(
            f"{path}: code nested too deeply for Python to read ({type(e).__name__})"
        ) from None
    except (SyntaxError, ValueError):
        pass
