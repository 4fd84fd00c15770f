"""Character-level language models: the task, the presets, and the run directory.

A run directory (``attnlab train gpt --out DIR``) holds config.json, tokenizer.json,
checkpoint.pt, log.jsonl and loss.png; ``sample``, ``viz gpt`` and ``compare`` load it back.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from ..catalog import PRESETS
from ..data import BUILTIN, CharTokenizer, TokenData, load_corpus
from ..errors import UserError
from ..files import atomic_write_text
from ..models import GPT, GPTConfig
from .checkpoint import CheckpointError, load_model
from .trainer import TrainConfig, Trainer, TrainResult, is_main_process


class LMTask:
    """Next-character prediction on random blocks of a corpus."""

    def __init__(self, data: TokenData, block_size: int):
        self.data, self.block_size = data, block_size

    def train_batch(self, gen, batch_size, device):
        x, y = self.data.batch("train", batch_size, self.block_size, gen)
        return x.to(device), y.to(device)

    def loss(self, model: nn.Module, batch) -> torch.Tensor:
        return model(*batch)[1]

    def tokens(self, batch) -> int:
        return batch[0].numel()

    def evaluate(self, model, gen, device, iters: int) -> dict[str, float]:
        out = {}
        for split in ("train", "val"):
            losses = []
            for _ in range(iters):
                x, y = self.data.batch(split, 16, self.block_size, gen)
                losses.append(model(x.to(device), y.to(device))[1].item())
            out[f"{split}_loss"] = sum(losses) / len(losses)
        out["val_ppl"] = math.exp(out["val_loss"])
        return out


@dataclass
class LMRunConfig:
    out: str = "runs/gpt"
    corpus: str = BUILTIN
    preset: str = "tiny"
    model: dict = field(default_factory=dict)  # overrides on top of the preset
    train: dict = field(default_factory=dict)
    resume: bool = False
    progress: bool = True


def resolve(cfg: LMRunConfig, vocab_size: int) -> tuple[GPTConfig, TrainConfig]:
    if cfg.preset not in PRESETS:
        raise UserError(f"unknown preset {cfg.preset!r}; choose one of {', '.join(PRESETS)}")
    p = PRESETS[cfg.preset]
    model = GPTConfig.from_dict({**p["model"], **cfg.model, "vocab_size": vocab_size})
    train = TrainConfig.from_dict({**p["train"], **cfg.train})
    return model, train


def train_lm(cfg: LMRunConfig, build=None, kind: str = "gpt") -> TrainResult:
    """Train (or resume) a character LM into ``cfg.out``. ``build(model_cfg_dict, vocab)`` makes
    a non-GPT model (the recurrent baselines); by default a GPT."""
    out = Path(cfg.out)
    if cfg.resume:
        saved = read_config(out)
        text = load_corpus(saved["corpus"])
        tok = CharTokenizer.load(out / "tokenizer.json")
        model_cfg = saved["model"]
        if cfg.model and any(saved["model"].get(k) != v for k, v in cfg.model.items()):
            raise UserError(
                f"cannot change the model of an existing run when resuming ({sorted(cfg.model)})"
            )
        train = TrainConfig.from_dict({**saved["train"], **cfg.train})
        kind = saved.get("kind", kind)
    else:
        text = load_corpus(cfg.corpus)
        tok = CharTokenizer.from_text(text)
        if kind == "gpt":
            mcfg, train = resolve(cfg, tok.vocab_size)
            model_cfg = mcfg.to_dict()
        else:
            model_cfg = {**cfg.model, "vocab_size": tok.vocab_size}
            train = TrainConfig.from_dict({**PRESETS[cfg.preset]["train"], **cfg.train})
    data = TokenData.from_text(text, tok)
    block = model_cfg.get("block_size", 64)
    torch.manual_seed(train.seed)
    model = GPT(GPTConfig.from_dict(model_cfg)) if kind == "gpt" else build(model_cfg)
    record = {
        "kind": kind,
        "model": model_cfg,
        "train": train.to_dict(),
        "corpus": str(cfg.corpus if not cfg.resume else saved["corpus"]),
    }
    trainer = Trainer(train, out, extra={"config": record}, progress=cfg.progress)
    if is_main_process():  # under torchrun only rank 0 writes the run directory
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "config.json", json.dumps(record, indent=2))
        tok.save(out / "tokenizer.json")
    return trainer.fit(model, LMTask(data, block), resume=cfg.resume)


def read_config(run_dir: str | Path) -> dict:
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UserError(
            f"{run_dir}: not a run directory (no config.json); train one with 'attnlab train gpt --out {run_dir}'"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def load_run(
    run_dir: str | Path, device: str = "cpu", build=None
) -> tuple[nn.Module, CharTokenizer, dict]:
    """The trained model (eval mode), its tokenizer and config from a run directory."""
    run_dir = Path(run_dir)
    cfg = read_config(run_dir)
    tok = CharTokenizer.load(run_dir / "tokenizer.json")
    if cfg.get("kind", "gpt") == "gpt":
        model = GPT(GPTConfig.from_dict(cfg["model"]))
    elif build is not None:
        model = build(cfg["model"])
    else:
        raise CheckpointError(f"{run_dir}: a {cfg.get('kind')!r} run, not a GPT")
    return load_model(model, run_dir, device), tok, cfg
