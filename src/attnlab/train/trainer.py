"""One trainer for every model (GPT, RNN baselines, seq2seq): the loop, evaluation, logs,
checkpoints, resume, Ctrl-C, and data-parallel training with torch DDP.

A model plugs in through a small ``Task``: how to draw a training batch, the loss on it, how many
tokens it holds, and how to evaluate. The trainer owns the rest. Under ``torchrun`` each process
trains on its own batches, gradients are averaged by DDP, and only rank 0 writes files.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from ..config import from_dict as strict_from_dict
from ..errors import UserError
from .checkpoint import load_checkpoint, save_checkpoint


@dataclass
class TrainConfig:
    max_iters: int = 500
    batch_size: int = 32
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 50
    lr_decay_iters: int | None = None  # default: max_iters
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0  # 0 = off
    eval_interval: int = 100
    eval_iters: int = 20
    log_interval: int = 10
    max_seconds: float | None = None  # stop early once this much training time has passed
    decay_by_time: bool = False  # with max_seconds: cosine over the time budget, not iterations
    seed: int = 1337
    device: str = "auto"  # "cpu" | "cuda" | "auto"

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        return strict_from_dict(cls, d)

    def to_dict(self) -> dict:
        return asdict(self)


def lr_at(it: int, cfg: TrainConfig, time_fraction: float | None = None) -> float:
    """Linear warmup to cfg.lr, then cosine decay to cfg.min_lr at lr_decay_iters (nanoGPT's).

    With ``cfg.decay_by_time`` (and max_seconds), the decay follows ``time_fraction``, the share of
    the time budget used so far: a run stopped by the clock still ends at min_lr.
    """
    decay_iters = cfg.lr_decay_iters or cfg.max_iters
    if it < cfg.warmup_iters:
        return cfg.lr * (it + 1) / (cfg.warmup_iters + 1)
    if cfg.decay_by_time and time_fraction is not None:
        ratio = min(1.0, time_fraction)
    elif it >= decay_iters:
        return cfg.min_lr
    else:
        ratio = (it - cfg.warmup_iters) / max(1, decay_iters - cfg.warmup_iters)
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (cfg.lr - cfg.min_lr)


class Task(Protocol):
    def train_batch(self, gen: torch.Generator, batch_size: int, device: torch.device) -> Any: ...
    def loss(self, model: nn.Module, batch: Any) -> Tensor: ...
    def tokens(self, batch: Any) -> int: ...
    def evaluate(
        self, model: nn.Module, gen: torch.Generator, device: torch.device, iters: int
    ) -> dict[str, float]: ...


@dataclass
class TrainResult:
    iters: int
    train_losses: list[float] = field(default_factory=list)  # one per step run in this call
    evals: list[dict] = field(default_factory=list)
    tokens_per_s: float = 0.0
    seconds: float = 0.0
    interrupted: bool = False


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda, but torch sees no CUDA device here")
    if name not in ("cpu", "cuda"):
        raise UserError(f"device must be cpu, cuda or auto, got {name!r}")
    return torch.device(name)


@dataclass
class Distributed:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


def is_main_process() -> bool:
    """Whether this is rank 0 of a torchrun job, or a plain single process (RANK unset)."""
    return int(os.environ.get("RANK", "0")) == 0


def init_distributed(device: torch.device) -> Distributed:
    """Join the process group when started by torchrun (WORLD_SIZE > 1); else a single process."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Distributed()
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return Distributed(
        dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0"))
    )


class Trainer:
    """``fit(model, task)`` trains and keeps the run directory up to date.

    The run directory holds ``checkpoint.pt`` (model, optimizer, RNG states, iteration),
    ``log.jsonl`` (one JSON object per log or eval line) and ``loss.png``; the caller writes
    ``config.json`` and the tokenizer. ``extra`` goes into every checkpoint (configs, etc.).
    """

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: str | Path | None,
        extra: dict | None = None,
        progress: bool = True,
        should_stop: Callable[[int], bool] | None = None,
    ):
        self.cfg, self.extra, self.progress = cfg, extra or {}, progress
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.should_stop = should_stop  # tests: simulate an interruption after iteration k
        self._interrupt = False

    # -- checkpoint ------------------------------------------------------------------------
    def _state(
        self,
        model: nn.Module,
        opt: torch.optim.Optimizer,
        it: int,
        gen: torch.Generator,
        seconds: float,
    ) -> dict:
        return {
            "attnlab": 1,
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "iter": it,
            "data_rng": gen.get_state(),
            "torch_rng": torch.get_rng_state(),
            "train": self.cfg.to_dict(),
            "seconds": seconds,
            **self.extra,
        }

    def fit(self, model: nn.Module, task: Task, resume: bool = False) -> TrainResult:
        cfg = self.cfg
        device = pick_device(cfg.device)
        dist = init_distributed(device)
        if device.type == "cuda":
            device = torch.device("cuda", dist.local_rank)
        model.to(device)
        raw = model
        decay_groups = (
            raw.optim_groups(cfg.weight_decay)
            if hasattr(raw, "optim_groups")
            else [{"params": list(raw.parameters()), "weight_decay": cfg.weight_decay}]
        )
        opt = torch.optim.AdamW(decay_groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
        gen = torch.Generator().manual_seed(cfg.seed + dist.rank)
        start, seconds = 0, 0.0
        ckpt_path = None if self.run_dir is None else self.run_dir / "checkpoint.pt"
        if resume:
            if ckpt_path is None:
                raise UserError("resume needs a run directory")
            state = load_checkpoint(ckpt_path, map_location=device)
            raw.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            start, seconds = int(state["iter"]), float(state.get("seconds", 0.0))
            gen.set_state(state["data_rng"])
            torch.set_rng_state(state["torch_rng"])
            if dist.world > 1:
                gen.manual_seed(cfg.seed + dist.rank + 7919 * start)  # ranks keep distinct streams
        if dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(
                model, device_ids=[device.index] if device.type == "cuda" else None
            )
        result = TrainResult(iters=start)
        log = self._open_log(resume) if dist.main else None
        old_handler = self._catch_sigint()
        bar = None
        if self.progress and dist.main:
            from tqdm import tqdm

            bar = tqdm(
                total=cfg.max_iters, initial=start, desc="training", unit="it", dynamic_ncols=True
            )
        tokens, t_window, tok_window = 0, time.perf_counter(), 0
        t0 = time.perf_counter()
        eval_time = 0.0  # kept out of tokens/s
        try:
            for it in range(start, cfg.max_iters):
                if it % cfg.eval_interval == 0 and (it > start or not resume):
                    t_eval = time.perf_counter()
                    ev = self._evaluate(raw, task, device, it)
                    result.evals.append(ev)
                    if dist.main:
                        self._write(log, ev)
                        if ckpt_path is not None:
                            save_checkpoint(
                                self._state(raw, opt, it, gen, seconds + time.perf_counter() - t0),
                                ckpt_path,
                            )
                        if bar is not None:
                            bar.set_postfix_str(f"val {ev['val_loss']:.3f}", refresh=False)
                    eval_time += time.perf_counter() - t_eval
                    t_window += time.perf_counter() - t_eval
                for g in opt.param_groups:
                    g["lr"] = lr_at(
                        it, cfg, self._time_fraction(seconds + time.perf_counter() - t0 - eval_time)
                    )
                model.train()
                batch = task.train_batch(gen, cfg.batch_size, device)
                loss = task.loss(model, batch)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
                opt.step()
                n_tok = task.tokens(batch) * dist.world
                tokens += n_tok
                tok_window += n_tok
                result.train_losses.append(loss.item())
                result.iters = it + 1
                if dist.main and (it % cfg.log_interval == 0 or it == cfg.max_iters - 1):
                    now = time.perf_counter()
                    tps = tok_window / max(now - t_window, 1e-9)
                    t_window, tok_window = now, 0
                    self._write(
                        log,
                        {
                            "iter": it,
                            "loss": round(loss.item(), 5),
                            "lr": lr_at(it, cfg),
                            "tokens_per_s": round(tps, 1),
                        },
                    )
                    if bar is not None:
                        bar.set_postfix_str(
                            f"loss {loss.item():.3f} · {tps:,.0f} tok/s", refresh=False
                        )
                if bar is not None:
                    bar.update(1)
                stop_now = self._interrupt or (
                    self.should_stop is not None and self.should_stop(it + 1)
                )
                over_time = (
                    cfg.max_seconds is not None
                    and seconds + time.perf_counter() - t0 >= cfg.max_seconds
                )
                if stop_now or over_time:
                    result.interrupted = stop_now
                    break
            final = self._evaluate(raw, task, device, result.iters)
            result.evals.append(final)
            elapsed = time.perf_counter() - t0
            result.seconds = seconds + elapsed
            result.tokens_per_s = tokens / max(elapsed - eval_time, 1e-9)
            if dist.main:
                self._write(
                    log,
                    {**final, "done": not result.interrupted, "interrupted": result.interrupted},
                )
                if ckpt_path is not None:
                    save_checkpoint(
                        self._state(raw, opt, result.iters, gen, result.seconds), ckpt_path
                    )
                    self._plot()
        finally:
            if bar is not None:
                bar.close()
            if log is not None:
                log.close()
            if old_handler is not None:
                signal.signal(signal.SIGINT, old_handler)
        return result

    # -- helpers ---------------------------------------------------------------------------
    def _time_fraction(self, elapsed: float) -> float | None:
        return elapsed / self.cfg.max_seconds if self.cfg.max_seconds else None

    def _evaluate(self, model: nn.Module, task: Task, device: torch.device, it: int) -> dict:
        gen = torch.Generator().manual_seed(self.cfg.seed + 100_003)  # same eval batches every time
        model.eval()
        with torch.no_grad():
            out = task.evaluate(model, gen, device, self.cfg.eval_iters)
        model.train()
        return {"iter": it, **{k: round(float(v), 5) for k, v in out.items()}}

    def _open_log(self, resume: bool):
        if self.run_dir is None:
            return None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        return open(self.run_dir / "log.jsonl", "a" if resume else "w", encoding="utf-8")

    @staticmethod
    def _write(log, record: dict) -> None:
        if log is not None:
            log.write(json.dumps(record) + "\n")
            log.flush()

    def _catch_sigint(self):
        try:

            def handler(signum, frame):
                self._interrupt = True  # finish this step, checkpoint, exit cleanly

            return signal.signal(signal.SIGINT, handler)
        except ValueError:  # not the main thread: leave Ctrl-C alone
            return None

    def _plot(self) -> None:
        if self.run_dir is None:
            return
        from .curves import plot_log

        plot_log(self.run_dir / "log.jsonl", self.run_dir / "loss.png")
