"""Seq2seq training runs on the date task: start or resume one, load one back.

Uses the same ``Trainer`` as the GPT (progress bar, eval, atomic checkpoints, resume). A run
directory holds config.json, checkpoint.pt, log.jsonl and loss.png; the vocabularies are fixed
(``attnlab.data.dates``), so no tokenizer file is needed. The task is in ``date_task``,
translation in ``translate``, the comparison of attention kinds in ``compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..catalog import SEQ2SEQ_TRAIN as DEFAULT_TRAIN
from ..config import from_dict
from ..data.dates import SOS, DateSplits
from ..models import Seq2Seq, Seq2SeqConfig
from .checkpoint import load_model
from .compare import S2SRow, compare_seq2seq, format_comparison
from .date_task import PROBE, SRC, TGT, DateTask, accuracy, encode_batch
from .rundir import check_out, check_same, read_config, start_run
from .trainer import TrainConfig, Trainer, TrainResult, pick_device
from .translate import Translation, iso_problem, translate


@dataclass
class Seq2SeqRunConfig:
    """A date-model run: where it goes, the attention kind, overrides of its model and
    training fields, and whether to resume or replace a run already there."""

    out: str = "runs/seq2seq"
    attention: str | None = None  # None: bahdanau (new run), the run's own (resume)
    model: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)
    resume: bool = False
    force: bool = False  # replace an existing run in ``out``
    progress: bool = True
    data_seed: int = 0


def _resumed(cfg: Seq2SeqRunConfig, out: Path) -> tuple[Seq2SeqConfig, TrainConfig, int]:
    saved = read_config(out, "seq2seq")
    check_same("attention", saved["model"]["attention"], cfg.attention)
    for key, value in cfg.model.items():
        check_same(key, saved["model"].get(key), value)
    mcfg = from_dict(Seq2SeqConfig, saved["model"])
    train = TrainConfig.from_dict({**saved["train"], **cfg.train})
    return mcfg, train, saved.get("data_seed", 0)


def train_seq2seq(cfg: Seq2SeqRunConfig, should_stop=None) -> TrainResult:
    """Train (or resume) a date model into ``cfg.out``; ``should_stop(iters_done)`` stops the
    run as Ctrl-C would (``Trainer``)."""
    out = Path(cfg.out)
    check_out(out, resume=cfg.resume, force=cfg.force)
    if cfg.resume:
        mcfg, train, data_seed = _resumed(cfg, out)
    else:
        kw = {"attention": cfg.attention or "bahdanau", **cfg.model}
        mcfg = from_dict(Seq2SeqConfig, {"src_vocab": len(SRC), "tgt_vocab": len(TGT), **kw})
        train = TrainConfig.from_dict({**DEFAULT_TRAIN, **cfg.train})
        data_seed = cfg.data_seed
    pick_device(train.device)
    torch.manual_seed(train.seed)
    model = Seq2Seq(mcfg)
    record = {
        "kind": "seq2seq",
        "model": mcfg.to_dict(),
        "train": train.to_dict(),
        "data_seed": data_seed,
    }
    trainer = Trainer(
        train, out, extra={"config": record}, progress=cfg.progress, should_stop=should_stop
    )
    task = DateTask(DateSplits.make(data_seed), data_seed)
    with start_run(out, record, force=cfg.force):
        return trainer.fit(model, task, resume=cfg.resume)


def load_seq2seq(run_dir: str | Path, device: str = "cpu") -> Seq2Seq:
    """The trained date model of a run directory."""
    cfg = read_config(run_dir, "seq2seq")
    return load_model(Seq2Seq(from_dict(Seq2SeqConfig, cfg["model"])), run_dir, device)


# Kept importable from here for callers written before the split (new code imports them from
# ``attnlab.train``, or from ``date_task``, ``translate`` and ``compare``).
__all__ = [
    "DEFAULT_TRAIN",
    "PROBE",
    "SOS",
    "SRC",
    "TGT",
    "DateTask",
    "S2SRow",
    "Seq2SeqRunConfig",
    "Translation",
    "accuracy",
    "compare_seq2seq",
    "encode_batch",
    "format_comparison",
    "iso_problem",
    "load_seq2seq",
    "train_seq2seq",
    "translate",
]
