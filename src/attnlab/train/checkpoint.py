"""Checkpoints: tensors and plain data only, written atomically, loaded weights-only, checksummed.

``torch.load(..., weights_only=True)`` refuses anything but tensors and plain containers, so a
checkpoint file cannot run code when loaded. Writes go to a temp file in the same folder and are
renamed into place, so a crash mid-write leaves the previous checkpoint intact. Each checkpoint
carries a SHA-256 of its contents (every tensor's bytes and every plain value), checked at load:
flipped bits are an error that names the file, not a model that samples NaN.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch

from ..errors import UserError
from ..files import atomic_write

CHECKSUM = "checksum"


class CheckpointError(UserError):
    """A checkpoint that is missing, damaged, or not an attnlab checkpoint."""


def content_digest(obj: object) -> str:
    """SHA-256 over a state dict's contents in a fixed order (keys sorted, tensors as bytes)."""
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def _feed(h, obj: object) -> None:
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        if t.numel():
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(obj, dict):
        h.update(b"D")
        for k in sorted(obj, key=str):
            h.update(repr(k).encode())
            _feed(h, obj[k])
    elif isinstance(obj, (list, tuple)):
        h.update(b"L")
        for x in obj:
            _feed(h, x)
    else:
        h.update(repr(obj).encode())


def save_checkpoint(state: dict, path: str | Path) -> Path:
    body = {k: v for k, v in state.items() if k != CHECKSUM}
    full = {**body, CHECKSUM: content_digest(body)}
    return atomic_write(path, lambda tmp: torch.save(full, tmp))


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"{path}: no checkpoint there (train first, or check the run directory)"
        )
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # truncated zip, foreign pickle, code objects refused by weights_only
        raise CheckpointError(
            f"{path}: damaged or not an attnlab checkpoint ({type(e).__name__}); "
            "restore it from a copy or train again"
        ) from None
    if not isinstance(state, dict) or "model" not in state or "attnlab" not in state:
        raise CheckpointError(
            f"{path}: not an attnlab checkpoint (missing 'model' or 'attnlab' entries)"
        )
    saved = state.pop(CHECKSUM, None)
    if saved is not None and saved != content_digest(state):
        raise CheckpointError(
            f"{path}: damaged (its contents do not match their checksum); "
            "restore it from a copy or train again"
        )
    return state


def load_weights(model: torch.nn.Module, weights: dict, where: str | Path) -> None:
    """``model.load_state_dict(weights)``, with an error that names the run if they differ."""
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CheckpointError(
            f"{where}: the checkpoint does not match its config.json ({str(e).splitlines()[0]})"
        ) from None


def load_model(
    model: torch.nn.Module, run_dir: str | Path, device: str | torch.device = "cpu"
) -> torch.nn.Module:
    """Load ``run_dir/checkpoint.pt`` (weights-only) into ``model``; eval mode, on ``device``."""
    path = Path(run_dir) / "checkpoint.pt"
    load_weights(model, load_checkpoint(path, map_location=device)["model"], path)
    return model.to(device).eval()
