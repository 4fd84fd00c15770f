"""Training: one trainer for every model (loop, eval, logs, checkpoints, resume, DDP)."""

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .trainer import TrainConfig, Trainer, TrainResult, lr_at, pick_device

__all__ = [
    "CheckpointError",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "load_checkpoint",
    "lr_at",
    "pick_device",
    "save_checkpoint",
]
