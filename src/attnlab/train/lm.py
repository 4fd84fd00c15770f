"""Character-level language models: the task, the presets, and the run directory.

A run directory (``attnlab train gpt --out DIR``) holds config.json, tokenizer.json,
checkpoint.pt, log.jsonl and loss.png; ``sample``, ``viz gpt`` and ``compare`` load it back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from ..catalog import PRESETS
from ..data import BUILTIN, CharTokenizer, TokenData, load_corpus
from ..errors import UserError
from ..models import GPT, GPTConfig
from .checkpoint import CheckpointError, load_model
from .rundir import check_out, check_same, read_config, start_run
from .trainer import TrainConfig, Trainer, TrainResult, pick_device

PROBE_LEN = 64  # characters of the probe text whose attention each evaluation records


class LMTask:
    """Next-character prediction on random blocks of a corpus.

    With ``context_parallel`` N > 1 (under torchrun), each group of N consecutive ranks shares
    its sequences: every rank of a group draws the same batch and keeps its zigzag shard of each
    sequence, and attention runs around the group's ring. Each rank's loss is the mean over its
    own tokens; shards are equal, so DDP's average of the gradients is the whole-sequence one.
    """

    def __init__(self, data: TokenData, block_size: int, context_parallel: int = 1):
        self.data, self.block_size = data, block_size
        self.cp_size, self.cp = context_parallel, None

    def _context(self):
        if self.cp is None and self.cp_size > 1:
            from ..nn.ring import ContextParallel

            self.cp = ContextParallel.build(self.cp_size, "zigzag")
        return self.cp

    def train_batch(self, gen, batch_size, device):
        x, y = self.data.batch("train", batch_size, self.block_size, gen)
        cp = self._context()
        if cp is not None:
            x, y = cp.shard(x), cp.shard(y)  # (B, T / N) each
        return x.to(device), y.to(device)

    def loss(self, model: nn.Module, batch) -> torch.Tensor:
        cp = self._context()
        return model(*batch, **({"context_parallel": cp} if cp is not None else {}))[1]

    def tokens(self, batch) -> int:
        return batch[0].numel()

    def probe(self, model, device) -> dict:
        """Every layer's and head's attention on the probe text: the start of the validation
        split (at most 64 characters): text as code points, weights (L, H, T, T) float16."""
        ids = self.data.val[: min(PROBE_LEN, self.block_size)]
        _, _, weights = model(ids[None].to(device), need_weights=True)
        w = torch.stack([x[0] for x in weights]).float().cpu().numpy()  # (L, H, T, T)
        return {"ids": ids.numpy(), "weights": w.astype("float16")}

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
    """A language-model run: where it goes, the corpus, the preset and overrides of its
    model and training fields, and whether to resume or replace a run already there."""

    out: str = "runs/gpt"
    corpus: str | None = None  # None: the built-in corpus (new run), the run's own (resume)
    preset: str = "tiny"
    model: dict = field(default_factory=dict)  # overrides on top of the preset
    train: dict = field(default_factory=dict)
    resume: bool = False
    force: bool = False  # replace an existing run in ``out``
    progress: bool = True


def resolve(cfg: LMRunConfig, vocab_size: int) -> tuple[GPTConfig, TrainConfig]:
    if cfg.preset not in PRESETS:
        raise UserError(f"unknown preset {cfg.preset!r}; choose one of {', '.join(PRESETS)}")
    p = PRESETS[cfg.preset]
    model = GPTConfig.from_dict({**p["model"], **cfg.model, "vocab_size": vocab_size})
    train = TrainConfig.from_dict({**p["train"], **cfg.train})
    return model, train


def corpus_id(source: str | Path | None) -> str:
    """How a run records its corpus: the built-in name, or an absolute path (so ``--resume``
    works from any folder)."""
    if source is None or str(source) == BUILTIN:
        return BUILTIN
    return str(Path(source).expanduser().resolve())


@dataclass
class _Plan:
    """Everything a run needs, worked out (and checked) before anything is written."""

    text: str
    tok: CharTokenizer
    model_cfg: dict
    train: TrainConfig
    kind: str
    corpus: str


def _plan_resume(cfg: LMRunConfig, out: Path, kind: str) -> _Plan:
    saved = read_config(out, kind)
    check_same("corpus", saved["corpus"], None if cfg.corpus is None else corpus_id(cfg.corpus))
    for key, value in cfg.model.items():
        check_same(key, saved["model"].get(key), value)
    text = load_corpus(saved["corpus"])
    tok = CharTokenizer.load(out / "tokenizer.json")
    train = TrainConfig.from_dict({**saved["train"], **cfg.train})
    return _Plan(text, tok, saved["model"], train, saved["kind"], saved["corpus"])


def _plan_new(cfg: LMRunConfig, kind: str) -> _Plan:
    corpus = corpus_id(cfg.corpus)
    text = load_corpus(corpus)
    tok = CharTokenizer.from_text(text)
    if kind == "gpt":
        mcfg, train = resolve(cfg, tok.vocab_size)
        model_cfg = mcfg.to_dict()
    else:
        model_cfg = {**cfg.model, "vocab_size": tok.vocab_size}
        train = TrainConfig.from_dict({**PRESETS[cfg.preset]["train"], **cfg.train})
    return _Plan(text, tok, model_cfg, train, kind, corpus)


def _check_context_parallel(n: int, block: int) -> None:
    import os

    if n == 1:
        return
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if n < 1 or world % n:
        raise UserError(
            f"--context-parallel {n} must divide the number of processes ({world}); "
            f"run under torchrun --nproc_per_node={n} (or a multiple)"
        )
    if block % (2 * n):
        raise UserError(
            f"--context-parallel {n}: block_size {block} must be a multiple of {2 * n} "
            "(each rank holds two equal chunks of every sequence)"
        )


def train_lm(cfg: LMRunConfig, build=None, kind: str = "gpt", should_stop=None) -> TrainResult:
    """Train (or resume) a character LM into ``cfg.out``. ``build(model_cfg_dict, vocab)`` makes
    a non-GPT model (the recurrent baselines); by default a GPT. ``should_stop(iters_done)``
    stops the run as Ctrl-C would (``Trainer``).

    Every check (the folder, the corpus, the configs, the device, the corpus length) happens
    before anything is written, and a failed start removes the folder it created."""
    out = Path(cfg.out)
    check_out(out, resume=cfg.resume, force=cfg.force)
    plan = _plan_resume(cfg, out, kind) if cfg.resume else _plan_new(cfg, kind)
    data = TokenData.from_text(plan.text, plan.tok)
    block = plan.model_cfg.get("block_size", 64)
    data.check_block(block)
    _check_context_parallel(plan.train.context_parallel, block)
    pick_device(plan.train.device)
    torch.manual_seed(plan.train.seed)
    model = (
        GPT(GPTConfig.from_dict(plan.model_cfg)) if plan.kind == "gpt" else build(plan.model_cfg)
    )
    record = {
        "kind": plan.kind,
        "model": plan.model_cfg,
        "train": plan.train.to_dict(),
        "corpus": plan.corpus,
    }
    trainer = Trainer(
        plan.train, out, extra={"config": record}, progress=cfg.progress, should_stop=should_stop
    )
    with start_run(
        out, record, force=cfg.force, extra=lambda d: plan.tok.save(d / "tokenizer.json")
    ):
        task = LMTask(data, block, plan.train.context_parallel)
        return trainer.fit(model, task, resume=cfg.resume)


def load_run(
    run_dir: str | Path, device: str = "cpu", build=None
) -> tuple[nn.Module, CharTokenizer, dict]:
    """The trained model (eval mode), its tokenizer and config from a run directory."""
    run_dir = Path(run_dir)
    cfg = read_config(run_dir)
    if cfg["kind"] == "seq2seq":
        raise UserError(f"{run_dir}: a seq2seq run; use 'attnlab translate {run_dir} TEXT' instead")
    tok = CharTokenizer.load(run_dir / "tokenizer.json")
    if cfg["kind"] == "gpt":
        model = GPT(GPTConfig.from_dict(cfg["model"]))
    elif build is not None:
        model = build(cfg["model"])
    else:
        raise CheckpointError(f"{run_dir}: a {cfg['kind']!r} run, not a GPT")
    return load_model(model, run_dir, device), tok, cfg
