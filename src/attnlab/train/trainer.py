"""One trainer for every model (GPT, RNN baselines, seq2seq): the loop, evaluation, logs,
checkpoints, resume, SIGINT/SIGTERM, and data-parallel training with torch DDP.

A model plugs in through a small ``Task``: how to draw a training batch, the loss on it, how many
tokens it holds, and how to evaluate. The trainer owns the rest, in small named steps (minGPT's
``Trainer.run`` is the model): ``fit`` is a short loop over ``_maybe_evaluate``, ``_step``,
``_log_step`` and ``_should_stop``. Under ``torchrun`` each process trains on its own batches,
gradients are averaged by DDP, and only rank 0 writes files.

Time: the budget (``max_seconds``), the LR's time fraction (``decay_by_time``) and tokens/s all
count training time only; evaluation time is kept out of all three. The budget counts this
call's training time only (a resumed run gets its own ``max_seconds``); the LR's time fraction
counts the whole run's, so a resumed schedule goes on where it stopped. Every stop records why
(``TrainResult.stop_reason``).
"""

from __future__ import annotations

import math
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from ..config import from_dict as strict_from_dict
from ..errors import UserError
from .checkpoint import load_checkpoint, load_weights
from .hooks import Hook, rank0_hooks


@dataclass
class TrainConfig:
    """How to train: steps and batch, AdamW and its LR schedule (warmup, cosine decay by steps
    or by the time budget), clipping, evaluation and logging intervals, the time budget, seed,
    device, context parallelism and the optional TensorBoard log."""

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
    context_parallel: int = 1  # ranks that share each sequence (ring attention); see LMTask
    tensorboard: bool = False  # also write TensorBoard events into RUN_DIR/tensorboard

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
    """What ``Trainer.fit`` did: iterations reached, this call's losses, every evaluation,
    tokens/s and training seconds, whether it was interrupted and why it stopped, the model."""

    iters: int
    train_losses: list[float] = field(default_factory=list)  # one per step run in this call
    evals: list[dict] = field(default_factory=list)
    tokens_per_s: float = 0.0
    seconds: float = 0.0
    interrupted: bool = False
    model: nn.Module | None = None  # the trained model itself (not a DDP wrapper)
    stop_reason: str = ""  # why training stopped, in words: "max_iters 500 reached", ...


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


def _on_every_rank(loop: _Loop, *flags: bool) -> tuple[bool, ...]:
    """Each flag as true on every rank when it is true on any: under DDP all ranks must stop
    at the same step (their clocks and signals differ), or those that go on wait forever in
    their next all-reduce for the one that stopped."""
    if loop.dist.world <= 1:
        return flags
    import torch.distributed as dist

    t = torch.tensor([float(f) for f in flags], device=loop.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return tuple(bool(f) for f in t.tolist())


def _iters_reason(start: int, max_iters: int) -> str:
    if start >= max_iters:
        return (
            f"already at max_iters {max_iters}: the checkpoint is at iter {start}; "
            "pass a larger --max-iters to train on"
        )
    return f"max_iters {max_iters} reached"


def leave_distributed() -> None:
    """End this process's part in the process group that training joined (under torchrun), if
    any: the DDP wrappers collected first (a reducer freed after its group is destroyed can
    wait forever in its destructor), then a barrier (no rank tears the group down while
    another still uses it), then the group destroyed."""
    import gc

    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


@dataclass
class _Loop:
    """The state of one ``fit`` call."""

    model: nn.Module  # what the steps run (a DDP wrapper under torchrun)
    raw: nn.Module  # the model itself: evaluated and checkpointed
    task: Task
    opt: torch.optim.Optimizer
    gen: torch.Generator
    device: torch.device
    dist: Distributed
    start: int
    seconds_before: float  # training seconds of earlier runs (resume)
    result: TrainResult = field(default_factory=lambda: TrainResult(0))
    hooks: list[Hook] = field(default_factory=list)  # rank 0's side effects; none elsewhere
    it: int = 0
    lr: float = 0.0
    clock: Callable[[], float] = time.perf_counter  # seconds; tests pass a fake one
    t0: float = 0.0
    eval_seconds: float = 0.0
    tokens: int = 0
    window: tuple[float, int] = (0.0, 0)  # (start time, tokens) since the last log line

    def run_seconds(self) -> float:
        """Training time of this call (this invocation), evaluation excluded."""
        return self.clock() - self.t0 - self.eval_seconds

    def train_seconds(self) -> float:
        """Training time so far, earlier runs included, evaluation excluded."""
        return self.seconds_before + self.run_seconds()

    def emit(self, event: str, *args) -> None:
        """Call ``event`` (``on_step``, ``on_eval``, ...) on every hook, in order."""
        for hook in self.hooks:
            getattr(hook, event)(self, *args)


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """AdamW groups under one rule for every model: decay the parameters of two or more
    dimensions (matmul weights, embeddings, recurrent weight matrices), never biases or norm
    gains (one dimension). Tied weights count once."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


class Trainer:
    """``fit(model, task)`` trains and keeps the run directory up to date.

    The run directory holds ``checkpoint.pt`` (model, optimizer, RNG states, iteration,
    training seconds), ``log.jsonl`` (one JSON object per step, eval or end line, each with its
    ``kind``) and ``loss.png``; the caller writes ``config.json`` and the tokenizer. ``extra``
    goes into every checkpoint (configs, etc.). SIGINT and SIGTERM finish the step in flight,
    write a checkpoint and return with ``interrupted`` set.

    Everything besides training is a hook (``attnlab.train.hooks``), run on rank 0 only: the
    log, bar, checkpoints, probes, plot, TensorBoard, and any ``hooks`` the caller adds.
    ``should_stop(iters_done)`` asks for a stop as Ctrl-C would (a checkpoint, ``interrupted``);
    ``clock`` (default ``time.perf_counter``) is what the budget and tokens/s are measured with.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: str | Path | None,
        extra: dict | None = None,
        progress: bool = True,
        should_stop: Callable[[int], bool] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        hooks: list[Hook] | None = None,
    ):
        self.cfg, self.extra, self.progress = cfg, extra or {}, progress
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.should_stop = should_stop
        self.clock = clock
        self.hooks = list(hooks or [])
        self._interrupt = False

    def fit(self, model: nn.Module, task: Task, resume: bool = False) -> TrainResult:
        loop = self._setup(model, task, resume)
        try:
            loop.emit("on_start")
            with self._signals():
                for it in range(loop.start, self.cfg.max_iters):
                    loop.it = it
                    self._maybe_evaluate(loop, resume)
                    loss = self._step(loop)
                    self._log_step(loop, loss)
                    if self._should_stop(loop):
                        break
                else:
                    loop.result.stop_reason = _iters_reason(loop.start, self.cfg.max_iters)
                self._finish(loop)
        finally:
            for hook in loop.hooks:
                hook.close()
        return loop.result

    # -- the steps -------------------------------------------------------------------------
    def _setup(self, model: nn.Module, task: Task, resume: bool) -> _Loop:
        cfg = self.cfg
        device = pick_device(cfg.device)
        dist = init_distributed(device)
        if device.type == "cuda":
            device = torch.device("cuda", dist.local_rank)
        model.to(device)
        groups = param_groups(model, cfg.weight_decay)
        opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
        data_rank = dist.rank // cfg.context_parallel  # ranks sharing sequences draw the same
        gen = torch.Generator().manual_seed(cfg.seed + data_rank)
        start, seconds = self._restore(model, opt, gen, device, dist) if resume else (0, 0.0)
        wrapped = model
        if dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            ids = [device.index] if device.type == "cuda" else None
            wrapped = DistributedDataParallel(model, device_ids=ids)
        loop = _Loop(wrapped, model, task, opt, gen, device, dist, start, seconds)
        loop.clock, loop.t0 = self.clock, self.clock()
        loop.result = TrainResult(iters=start)
        loop.window = (loop.t0, 0)
        if dist.main:
            own = rank0_hooks(cfg, self.run_dir, self.extra, self.progress, resume)
            loop.hooks = own + self.hooks
        return loop

    def _restore(self, model, opt, gen, device, dist) -> tuple[int, float]:
        if self.run_dir is None:
            raise UserError("resume needs a run directory")
        path = self.run_dir / "checkpoint.pt"
        state = load_checkpoint(path, map_location=device)
        load_weights(model, state["model"], path)
        opt.load_state_dict(state["optimizer"])
        start = int(state["iter"])
        gen.set_state(state["data_rng"])
        torch.set_rng_state(state["torch_rng"])
        if dist.world > 1:
            data_rank = dist.rank // self.cfg.context_parallel
            gen.manual_seed(self.cfg.seed + data_rank + 7919 * start)  # distinct data streams
        return start, float(state.get("seconds", 0.0))

    def _maybe_evaluate(self, loop: _Loop, resume: bool) -> None:
        """Every ``eval_interval`` steps: evaluate, then the hooks (log, checkpoint, probe, ...);
        not again right on resume. Their time counts as evaluation, not training."""
        if loop.it % self.cfg.eval_interval or (resume and loop.it == loop.start):
            return
        t = loop.clock()
        ev = self._evaluate(loop, loop.it)
        loop.emit("on_eval", ev)
        spent = loop.clock() - t
        loop.eval_seconds += spent
        loop.window = (loop.window[0] + spent, loop.window[1])

    def _step(self, loop: _Loop) -> float:
        """One optimiser step at the LR the schedule gives now; returns the loss (one sync)."""
        cfg = self.cfg
        loop.lr = lr_at(loop.it, cfg, self._time_fraction(loop.train_seconds()))
        for g in loop.opt.param_groups:
            g["lr"] = loop.lr
        loop.model.train()
        batch = loop.task.train_batch(loop.gen, cfg.batch_size, loop.device)
        loss = loop.task.loss(loop.model, batch)
        loop.opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(loop.model.parameters(), cfg.grad_clip)
        loop.opt.step()
        n_tok = loop.task.tokens(batch) * loop.dist.world
        loop.tokens += n_tok
        loop.window = (loop.window[0], loop.window[1] + n_tok)
        value = loss.item()
        loop.result.train_losses.append(value)
        loop.result.iters = loop.it + 1
        return value

    def _log_step(self, loop: _Loop, loss: float) -> None:
        """The step to the hooks, with its log line every ``log_interval`` steps and at the
        last one (loss, LR, tokens/s since the previous line)."""
        cfg, it = self.cfg, loop.it
        record = None
        if it % cfg.log_interval == 0 or it == cfg.max_iters - 1:
            now = loop.clock()
            tps = loop.window[1] / max(now - loop.window[0], 1e-9)
            loop.window = (now, 0)
            record = {"iter": it, "loss": round(loss, 5), "lr": loop.lr}
            record["tokens_per_s"] = round(tps, 1)
        loop.emit("on_step", loss, record)

    def _should_stop(self, loop: _Loop) -> bool:
        """Stop on a signal, a caller's request or the time budget (this call's training time),
        recording why; every rank stops at the same step."""
        signal_seen = self._interrupt
        asked = signal_seen or (self.should_stop is not None and self.should_stop(loop.it + 1))
        budget = self.cfg.max_seconds
        spent = budget is not None and loop.run_seconds() >= budget
        asked, spent = _on_every_rank(loop, asked, spent)
        loop.result.interrupted = asked
        if asked:
            loop.result.stop_reason = "Ctrl-C or SIGTERM" if signal_seen else "stop requested"
        elif spent:
            loop.result.stop_reason = (
                f"time cap: {loop.run_seconds():.1f} s of training in this run, "
                f"max_seconds {budget:g}"
            )
        return asked or spent

    def _finish(self, loop: _Loop) -> None:
        """The final evaluation and the result's numbers, then the hooks (log, checkpoint,
        probe, plot)."""
        result = loop.result
        result.model = loop.raw
        result.seconds = loop.train_seconds()
        result.tokens_per_s = loop.tokens / max(loop.run_seconds(), 1e-9)
        final = self._evaluate(loop, result.iters)
        loop.emit("on_end", final)

    # -- helpers ---------------------------------------------------------------------------
    def _time_fraction(self, train_seconds: float) -> float | None:
        return train_seconds / self.cfg.max_seconds if self.cfg.max_seconds else None

    def _evaluate(self, loop: _Loop, it: int) -> dict:
        gen = torch.Generator().manual_seed(self.cfg.seed + 100_003)  # same eval batches every time
        loop.raw.eval()
        with torch.no_grad():
            out = loop.task.evaluate(loop.raw, gen, loop.device, self.cfg.eval_iters)
        loop.raw.train()
        ev = {"iter": it, **{k: round(float(v), 5) for k, v in out.items()}}
        loop.result.evals.append(ev)
        return ev

    @contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGINT (Ctrl-C) and SIGTERM (kill): finish the step in flight, checkpoint, return."""

        def handler(signum, frame):
            self._interrupt = True

        old = {}
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                old[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: leave signals alone
            pass
        try:
            yield
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
