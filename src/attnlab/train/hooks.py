"""What a training run does besides training: the trainer's side effects as hooks.

The trainer calls each hook at four moments: ``on_start`` (before the first step), ``on_step``
(after every step; ``record`` is the log line on logging steps, else None), ``on_eval`` (after
each periodic evaluation) and ``on_end`` (after the final evaluation); ``close`` always runs,
even after an error. Under torchrun only rank 0 gets hooks (``rank0_hooks``): the other ranks
train and write nothing, with no rank test anywhere in the loop.

Hooks here: the JSON-lines log, the progress bar (or, without one, a line saying how long
training has left), checkpoints, the attention probes the explorer's slider reads, the loss
plot, and an optional TensorBoard log. A caller may add its
own (``Trainer(..., hooks=[...])``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..errors import UserError
from . import probes
from .checkpoint import save_checkpoint
from .rundir import clean_stale_temps, truncate_log

if TYPE_CHECKING:  # the loop's state type, for annotations only (no import cycle at run time)
    from .trainer import TrainConfig, _Loop


class Hook:
    """A side effect of training; every method does nothing unless overridden."""

    def on_start(self, loop: _Loop) -> None:
        """Before the first step of this call."""

    def on_step(self, loop: _Loop, loss: float, record: dict | None) -> None:
        """After each step; ``record`` is the step's log line on logging steps, else None."""

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        """After each periodic evaluation (``ev``: iter and the task's numbers)."""

    def on_end(self, loop: _Loop, final: dict) -> None:
        """After the final evaluation; ``loop.result`` holds the run's numbers."""

    def close(self) -> None:
        """Release files and bars; runs after the loop even when it raised."""


class JsonlLog(Hook):
    """``log.jsonl``: one JSON object per logged step, evaluation and end, each with its kind.

    On resume the log is cut back to the checkpoint's iteration (and the probes after it are
    dropped), so log and plot read as one run after a ``kill -9``; stale temp files go."""

    def __init__(self, run_dir: Path, resume: bool):
        self.run_dir, self.resume = run_dir, resume
        self.file: Any = None

    def on_start(self, loop: _Loop) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(self.run_dir)
        path = self.run_dir / "log.jsonl"
        if self.resume:
            truncate_log(path, loop.start)
            probes.drop_after(self.run_dir, loop.start)
        self.file = open(path, "a" if self.resume else "w", encoding="utf-8")

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def on_step(self, loop: _Loop, loss: float, record: dict | None) -> None:
        if record is not None:
            self.write({"kind": "step", **record})

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        self.write({"kind": "eval", **ev})

    def on_end(self, loop: _Loop, final: dict) -> None:
        r = loop.result
        end = {"kind": "end", **final, "done": not r.interrupted, "interrupted": r.interrupted}
        self.write({**end, "reason": r.stop_reason})

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class ProgressBar(Hook):
    """A tqdm bar over the iterations, with the last loss, tokens/s and validation loss."""

    def __init__(self, max_iters: int):
        self.max_iters = max_iters
        self.bar: Any = None

    def on_start(self, loop: _Loop) -> None:
        from tqdm import tqdm

        self.bar = tqdm(
            total=self.max_iters, initial=loop.start, desc="training", unit="it", dynamic_ncols=True
        )

    def on_step(self, loop: _Loop, loss: float, record: dict | None) -> None:
        if record is not None:
            tps = record["tokens_per_s"]
            self.bar.set_postfix_str(f"loss {loss:.3f} · {tps:,.0f} tok/s", refresh=False)
        self.bar.update(1)

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        if "val_loss" in ev:
            self.bar.set_postfix_str(f"val {ev['val_loss']:.3f}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class TimeLeft(Hook):
    """Without a progress bar (output not a terminal), one line on stderr early in a long run:
    the training time left, from the pace of steps 2 to 6 (the first carries warm-up), capped
    by the time budget. Runs with under ``quiet_below`` seconds to go say nothing."""

    def __init__(self, cfg: TrainConfig, quiet_below: float = 30.0):
        self.cfg, self.quiet_below = cfg, quiet_below
        self.mark: tuple[int, float] | None = None

    def on_step(self, loop: _Loop, loss: float, record: dict | None) -> None:
        done = loop.it - loop.start + 1  # steps of this call
        if done == 1:
            self.mark = (loop.it, loop.run_seconds())
        elif done == 6 and self.mark is not None:
            per = (loop.run_seconds() - self.mark[1]) / (loop.it - self.mark[0])
            more = self.cfg.max_iters - loop.it - 1
            left = more * per
            if self.cfg.max_seconds is not None:
                left = min(left, self.cfg.max_seconds - loop.run_seconds())
            if left >= self.quiet_below:
                import sys

                took = f"{left / 60:.1f} min" if left >= 90 else f"{left:.0f} s"
                print(f"training: about {took} left ({more} more iterations at {per:.2f} s "
                      "each, evaluation not counted)", file=sys.stderr, flush=True)  # fmt: skip


class Checkpoints(Hook):
    """``checkpoint.pt`` after every evaluation and at the end: model, optimizer, RNG states,
    iteration and training seconds (written atomically), plus ``extra`` (configs)."""

    def __init__(self, run_dir: Path, cfg: TrainConfig, extra: dict):
        self.run_dir, self.cfg, self.extra = run_dir, cfg, extra

    def save(self, loop: _Loop, it: int, seconds: float) -> None:
        state = {
            "attnlab": 1,
            "model": loop.raw.state_dict(),
            "optimizer": loop.opt.state_dict(),
            "iter": it,
            "data_rng": loop.gen.get_state(),
            "torch_rng": torch.get_rng_state(),
            "train": self.cfg.to_dict(),
            "seconds": seconds,
            **self.extra,
        }
        save_checkpoint(state, self.run_dir / "checkpoint.pt")

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        self.save(loop, ev["iter"], loop.train_seconds())

    def on_end(self, loop: _Loop, final: dict) -> None:
        self.save(loop, loop.result.iters, loop.result.seconds)


class Probes(Hook):
    """The task's attention on its probe text at every evaluation and at the end, saved for
    ``attnlab explore``'s training slider (tasks without ``probe`` record nothing)."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir

    def _record(self, loop: _Loop, it: int) -> None:
        if not hasattr(loop.task, "probe"):
            return
        loop.raw.eval()
        with torch.no_grad():
            arrays = loop.task.probe(loop.raw, loop.device)
        loop.raw.train()
        probes.save(self.run_dir, it, arrays)

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        self._record(loop, ev["iter"])

    def on_end(self, loop: _Loop, final: dict) -> None:
        self._record(loop, loop.result.iters)


class LossPlot(Hook):
    """``loss.png`` from the log, at the end."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir

    def on_end(self, loop: _Loop, final: dict) -> None:
        from .curves import plot_log

        plot_log(self.run_dir / "log.jsonl", self.run_dir / "loss.png")


class TensorBoardLog(Hook):
    """TensorBoard events in ``RUN_DIR/tensorboard``: train/loss, train/lr and train/tokens_per_s
    at each logged step, each evaluation number under eval/ (torch.utils.tensorboard; needs
    the ``tensorboard`` package, checked before training starts)."""

    def __init__(self, run_dir: Path):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise UserError(
                "--tensorboard needs the tensorboard package: pip install tensorboard"
            ) from None
        self.writer = SummaryWriter(str(run_dir / "tensorboard"))

    def on_step(self, loop: _Loop, loss: float, record: dict | None) -> None:
        if record is not None:
            it = record["iter"]
            self.writer.add_scalar("train/loss", record["loss"], it)
            self.writer.add_scalar("train/lr", record["lr"], it)
            self.writer.add_scalar("train/tokens_per_s", record["tokens_per_s"], it)

    def on_eval(self, loop: _Loop, ev: dict) -> None:
        for key, value in ev.items():
            if key != "iter":
                self.writer.add_scalar(f"eval/{key}", value, ev["iter"])

    def on_end(self, loop: _Loop, final: dict) -> None:
        self.on_eval(loop, final)

    def close(self) -> None:
        self.writer.close()


def rank0_hooks(
    cfg: TrainConfig, run_dir: Path | None, extra: dict, progress: bool, resume: bool
) -> list[Hook]:
    """The side effects of a run on rank 0: files in ``run_dir`` (none without one), the bar."""
    hooks: list[Hook] = []
    if run_dir is not None:
        hooks += [JsonlLog(run_dir, resume), Checkpoints(run_dir, cfg, extra), Probes(run_dir)]
        hooks.append(LossPlot(run_dir))
        if cfg.tensorboard:
            hooks.append(TensorBoardLog(run_dir))
    if progress:
        hooks.append(ProgressBar(cfg.max_iters))
    elif run_dir is not None:
        hooks.append(TimeLeft(cfg))
    return hooks
