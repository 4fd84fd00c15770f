"""Checkpoints: tensors and plain data only, written atomically, loaded weights-only.

``torch.load(..., weights_only=True)`` refuses anything but tensors and plain containers, so a
checkpoint file cannot run code when loaded. Writes go to a temp file in the same folder and are
renamed into place, so a crash mid-write leaves the previous checkpoint intact.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..errors import UserError
from ..files import atomic_write


class CheckpointError(UserError):
    """A checkpoint that is missing, truncated, or not an attnlab checkpoint."""


def save_checkpoint(state: dict, path: str | Path) -> Path:
    return atomic_write(path, lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"{path}: no checkpoint there (train first, or check the run directory)"
        )
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # truncated zip, foreign pickle, code objects refused by weights_only
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(
            f"{path}: not a readable attnlab checkpoint ({first[:200]})"
        ) from None
    if not isinstance(state, dict) or "model" not in state or "attnlab" not in state:
        raise CheckpointError(
            f"{path}: not an attnlab checkpoint (missing 'model' or 'attnlab' entries)"
        )
    return state


def load_model(
    model: torch.nn.Module, run_dir: str | Path, device: str | torch.device = "cpu"
) -> torch.nn.Module:
    """Load ``run_dir/checkpoint.pt`` (weights-only) into ``model``; eval mode, on ``device``."""
    state = load_checkpoint(Path(run_dir) / "checkpoint.pt", map_location=device)
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as e:
        raise CheckpointError(
            f"{run_dir}/checkpoint.pt does not match its config.json ({str(e).splitlines()[0]})"
        ) from None
    return model.to(device).eval()
