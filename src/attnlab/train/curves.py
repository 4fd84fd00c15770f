"""The loss curve of a run (``loss.png``), drawn from its log.jsonl.

Part of what a run writes, like its checkpoint: drawn on a bare matplotlib ``Figure`` (no
pyplot, no backend switch, no ``attnlab.viz``), so training never depends on the plots package.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..files import atomic_write


def read_log(path: str | Path) -> list[dict]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def plot_log(log_path: str | Path, out: str | Path) -> Path:
    """Train and validation loss over iterations, written atomically to ``out`` (PNG)."""
    from matplotlib.figure import Figure

    records = read_log(log_path)
    train = [(r["iter"], r["loss"]) for r in records if "loss" in r]
    val = [(r["iter"], r["val_loss"]) for r in records if "val_loss" in r]
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    if train:
        ax.plot(*zip(*train, strict=True), label="train loss", lw=1)
    if val:
        ax.plot(*zip(*val, strict=True), "o-", label="val loss", ms=3)
    ax.set_xlabel("iteration")
    ax.set_ylabel("cross-entropy (nats)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return atomic_write(out, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
