"""Run directories that never lose work.

- A folder that already holds a run is refused unless the user resumes it or says ``--force``.
- A failed start (bad corpus, no CUDA, a config that does not build) leaves no new folder.
- Temp files of interrupted writes (``.checkpoint.pt.XXXX.tmp``) are removed at the next start.
- On resume the log is cut back to the checkpoint's iteration, so log and plot read as one run.
- Resuming with a different corpus, attention or model setting is an error naming both values.
- ``read_config`` is the one reader of a run's ``config.json`` (train, sample, translate, explore).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text

RUN_FILES = ("config.json", "tokenizer.json", "checkpoint.pt", "log.jsonl", "loss.png")


def read_config(run_dir: str | Path, kind: str | None = None) -> dict:
    """A run's ``config.json``, its ``kind`` always set (runs from before kinds were recorded
    are GPTs). With ``kind``, a run of another kind is a one-line error."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UserError(
            f"{run_dir}: not a run directory (no config.json); train one with "
            f"'attnlab train {kind or 'gpt'} --out {run_dir}'"
        )
    cfg = {"kind": "gpt", **json.loads(path.read_text(encoding="utf-8"))}
    if kind is not None and cfg["kind"] != kind:
        raise UserError(f"{run_dir}: a {cfg['kind']!r} run, not a {kind} run")
    return cfg


def clean_stale_temps(folder: Path) -> list[Path]:
    """Remove the temp files that atomic writes leave when killed mid-write."""
    stale = [p for p in folder.glob(".*.tmp") if p.is_file()] if folder.is_dir() else []
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def is_main_process() -> bool:
    """Whether this is rank 0 of a torchrun job, or a plain single process (RANK unset): the
    one process that owns the run folder."""
    return int(os.environ.get("RANK", "0")) == 0


def check_out(out: Path, *, resume: bool, force: bool) -> None:
    """Refuse what would lose work or cannot work, before anything is written. Only rank 0
    checks: under torchrun the other ranks would race the files rank 0 writes."""
    if not is_main_process():
        return
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: a file, expected a run folder")
    held = [f for f in RUN_FILES if (out / f).exists()]
    if resume:
        if not (out / "config.json").is_file():
            raise UserError(f"--resume: {out} holds no run (no config.json)")
        if not (out / "checkpoint.pt").is_file():
            raise UserError(f"--resume: {out} has no checkpoint.pt to continue from")
        if force:
            raise UserError("--resume and --force contradict each other: choose one")
    elif held and not force:
        raise UserError(
            f"--out {out} already holds a run ({', '.join(held)}); pass --resume to continue "
            "it, --force to replace it, or choose another --out"
        )


def replace_run(out: Path) -> None:
    """``--force``: remove the earlier run's files (only those, nothing else in the folder)."""
    for f in RUN_FILES:
        (out / f).unlink(missing_ok=True)


@contextmanager
def removed_if_start_fails(out: Path) -> Iterator[None]:
    """Remove ``out`` again if it did not exist and the block fails (a failed start)."""
    existed = out.exists()
    try:
        yield
    except BaseException:
        if not existed and out.is_dir() and not (out / "checkpoint.pt").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise


def record_kind(r: dict) -> str:
    """``step``, ``eval`` or ``end`` (logs written before records carried their kind too)."""
    if "kind" in r:
        return r["kind"]
    return "step" if "tokens_per_s" in r else "end" if "done" in r else "eval"


def truncate_log(path: Path, iteration: int) -> int:
    """Keep what happened before the checkpoint at ``iteration``: steps before it, evaluations
    up to it. Returns how many records were dropped."""
    if not path.is_file():
        return 0
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
            keep = r["iter"] < iteration or (
                r["iter"] == iteration and record_kind(r) in ("eval", "end")
            )
        except (ValueError, KeyError, TypeError):
            keep = False  # a line cut short by a kill
        if keep:
            kept.append(line)
        else:
            dropped += 1
    atomic_write_text(path, "".join(x + "\n" for x in kept))
    return dropped


@contextmanager
def start_run(out: Path, record: dict, *, force: bool, extra=None) -> Iterator[None]:
    """Rank 0 replaces a run under ``--force`` and writes ``config.json`` (then ``extra(out)``,
    e.g. the tokenizer); if the block (the training) fails before its first checkpoint, a
    folder this start created is removed again."""
    with removed_if_start_fails(out):
        if is_main_process():
            if force:
                replace_run(out)
            atomic_write_text(out / "config.json", json.dumps(record, indent=2))
            if extra is not None:
                extra(out)
        yield


def check_same(what: str, saved: object, given: object) -> None:
    """On resume, a setting given again must equal the run's own."""
    if given is not None and given != saved:
        raise UserError(
            f"--resume: this run's {what} is {saved!r}, got {given!r}; a run keeps its "
            "settings (start a new run with another --out to change it)"
        )
