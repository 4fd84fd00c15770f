"""Attention on a fixed probe text, recorded at every evaluation of a run.

``attnlab explore`` shows these snapshots on a slider: how each head's attention formed during
training. A task that can be probed has ``probe(model, device) -> dict of arrays``; the trainer
(rank 0) saves each as ``RUN_DIR/attention/step_0000100.npz``. Resuming drops the snapshots
after the checkpoint, as it truncates the log.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from ..files import atomic_write

FOLDER = "attention"
NAME = re.compile(r"^step_(\d{7})\.npz$")


def save(run_dir: str | Path, step: int, arrays: dict[str, np.ndarray]) -> Path:
    """Write one snapshot (whole or not at all)."""
    folder = Path(run_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return atomic_write(
        folder / f"step_{step:07d}.npz", lambda tmp: Path(tmp).write_bytes(buf.getvalue())
    )


def steps(run_dir: str | Path) -> list[int]:
    folder = Path(run_dir) / FOLDER
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := NAME.match(p.name)))


def load(run_dir: str | Path) -> list[tuple[int, dict[str, np.ndarray]]]:
    """Every snapshot of a run, oldest first: (step, arrays). Arrays only, no pickles."""
    out = []
    for step in steps(run_dir):
        path = Path(run_dir) / FOLDER / f"step_{step:07d}.npz"
        with np.load(path, allow_pickle=False) as z:
            out.append((step, {k: z[k] for k in z.files}))
    return out


def drop_after(run_dir: str | Path, step: int) -> None:
    """Remove snapshots newer than ``step`` (a resumed run records them again)."""
    for s in steps(run_dir):
        if s > step:
            (Path(run_dir) / FOLDER / f"step_{s:07d}.npz").unlink()


__all__ = ["FOLDER", "drop_after", "load", "save", "steps"]
