"""Training: one trainer for every model (loop, eval, logs, checkpoints, resume, DDP).

- ``trainer``: the loop; ``checkpoint``, ``rundir``, ``curves``, ``probes``: what a run writes
- ``lm``: character language models (GPT and the recurrent baselines) as runs
- ``date_task``, ``seq2seq``, ``translate``: the date task, its runs, a date through a model
- ``compare``: competing models on one time budget (LMs, and seq2seq attention kinds)
"""

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .compare import compare_lm, compare_seq2seq, format_comparison, format_rows
from .date_task import PROBE, SRC, TGT, DateTask, encode_batch
from .lm import LMRunConfig, LMTask, load_run, train_lm
from .rundir import read_config
from .seq2seq import Seq2SeqRunConfig, load_seq2seq, train_seq2seq
from .trainer import TrainConfig, Trainer, TrainResult, lr_at, pick_device
from .translate import Translation, iso_problem, translate

__all__ = [
    "PROBE",
    "SRC",
    "TGT",
    "CheckpointError",
    "DateTask",
    "LMRunConfig",
    "LMTask",
    "Seq2SeqRunConfig",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "Translation",
    "compare_lm",
    "compare_seq2seq",
    "encode_batch",
    "format_comparison",
    "format_rows",
    "iso_problem",
    "load_checkpoint",
    "load_run",
    "load_seq2seq",
    "lr_at",
    "pick_device",
    "read_config",
    "save_checkpoint",
    "train_lm",
    "train_seq2seq",
    "translate",
]
