"""Run directories that never lose work.

- A folder that already holds a run is refused unless the user resumes it or says ``--force``.
- A failed start (bad corpus, no CUDA, a config that does not build) leaves no new folder.
- Temp files of interrupted writes (``.checkpoint.pt.XXXX.tmp``) are removed at the next start.
- On resume the log is cut back to the checkpoint's iteration, so log and plot read as one run.
- Resuming with a different corpus, attention or model setting is an error naming both values.
- ``read_config`` is the one reader of a run's ``config.json`` (train, sample, translate, explore,
  serve). A run folder is untrusted input (it can be handed in, downloaded, damaged): the file is
  read up to 1 MiB, every model value is checked for its type and bounds, and the memory the
  model would take is estimated from the config and checked against ``MODEL_BYTES_MAX`` and the
  machine's free memory, all before a model is built. Each bad value is one line, exit 2.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text

RUN_FILES = ("config.json", "tokenizer.json", "checkpoint.pt", "log.jsonl", "loss.png")
CONFIG_BYTES_MAX = 2**20
MODEL_BYTES_MAX = 8 * 2**30  # attnlab's runs are far smaller; a config asking more is refused
GPT_BOUNDS = {  # field: (type, low, high); None: no bound
    "vocab_size": (int, 1, 2**20),
    "block_size": (int, 1, 2**16),
    "n_layer": (int, 1, 1024),
    "n_head": (int, 1, 1024),
    "n_kv_head": (int, 1, 1024),  # or null
    "n_embd": (int, 1, 2**16),
    "dropout": (float, 0.0, 1.0),
    "bias": (bool, None, None),
    "pos": (str, None, None),
}
SEQ2SEQ_BOUNDS = {
    "src_vocab": (int, 1, 2**20),
    "tgt_vocab": (int, 1, 2**20),
    "attention": (str, None, None),
    "emb": (int, 1, 2**16),
    "hidden": (int, 1, 2**16),
    "attn_hidden": (int, 1, 2**16),
    "dropout": (float, 0.0, 1.0),
}
OTHER_INT_MAX = 2**16  # any whole number in another kind's model config


def read_config(run_dir: str | Path, kind: str | None = None) -> dict:
    """A run's ``config.json``, its ``kind`` always set (runs from before kinds were recorded
    are GPTs). With ``kind``, a run of another kind is a one-line error."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UserError(
            f"{run_dir}: not a run directory (no config.json); train one with "
            f"'attnlab train {kind or 'gpt'} --out {run_dir}'"
        )
    with path.open("rb") as f:
        raw = f.read(CONFIG_BYTES_MAX + 1)
    if len(raw) > CONFIG_BYTES_MAX:
        raise UserError(f"{path}: larger than {CONFIG_BYTES_MAX // 2**20} MiB; not a run's config")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise UserError(f"{path}: damaged, not JSON ({str(e)[:120]})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: damaged, expected a JSON object, got {type(data).__name__}")
    cfg = {"kind": "gpt", **data}
    if not isinstance(cfg["kind"], str):
        raise UserError(f"{path}: kind must be text, got {cfg['kind']!r:.60}")
    if kind is not None and cfg["kind"] != kind:
        raise UserError(f"{run_dir}: a {cfg['kind']!r:.60} run, not a {kind} run")
    check_model(cfg, path)
    return cfg


def check_model(cfg: dict, where: Path) -> None:
    """Types and bounds of ``cfg["model"]``, then the memory its model would need against
    ``MODEL_BYTES_MAX`` and the free memory: a one-line UserError for the first bad value."""
    model = cfg.get("model")
    if not isinstance(model, dict):
        raise UserError(f"{where}: 'model' must be an object of settings, got {model!r:.60}")
    bounds = {"gpt": GPT_BOUNDS, "seq2seq": SEQ2SEQ_BOUNDS}.get(cfg["kind"])
    if bounds is None:
        _check_other(model, where)
    for name, value in model.items():
        if bounds is not None and name in bounds:
            _check_value(name, value, *bounds[name], where)
    if bounds is not None:
        _typed_config(cfg["kind"], model, where)
    need = model_bytes(cfg["kind"], model)
    free = available_memory()
    limit, what = (MODEL_BYTES_MAX, "attnlab's limit for a run")
    if free is not None and free < limit:
        limit, what = free, "this machine's free memory"
    if need > limit:
        big = ", ".join(f"{k} {v}" for k, v in model.items() if type(v) is int and v > 1)
        raise UserError(
            f"{where}: its model would need about {_gib(need)} ({big[:120]}), more than "
            f"{what} ({_gib(limit)})"
        )


def _typed_config(kind: str, model: dict, where: Path) -> None:
    """The typed config (a dataclass, no weights): unknown fields and the checks between fields
    (``n_head`` divides ``n_embd``), named with the file."""
    from ..config import from_dict
    from ..models.gpt import GPTConfig
    from ..models.seq2seq import Seq2SeqConfig

    try:
        from_dict(GPTConfig if kind == "gpt" else Seq2SeqConfig, model)
    except (UserError, TypeError) as e:
        raise UserError(f"{where}: {str(e).splitlines()[0][:200]}") from None


def _check_value(name: str, value: object, kind: type, low, high, where: Path) -> None:
    if name == "n_kv_head" and value is None:
        return
    ok = type(value) is kind or (kind is float and type(value) is int)
    if not ok:
        raise UserError(f"{where}: model {name} must be {kind.__name__}, got {value!r:.60}")
    if (low is not None and not (low <= value <= high)) or (kind is float and value == high):
        upper = "below" if kind is float else "at most"
        raise UserError(
            f"{where}: model {name} = {value!r:.60}: expected at least {low}, {upper} {high}"
        )


def _check_other(model: dict, where: Path) -> None:
    """A kind built by a lesson's own code: every number finite, every whole number at most
    ``OTHER_INT_MAX`` (its builder checks the rest)."""
    for name, value in model.items():
        if type(value) is int and not 0 <= value <= OTHER_INT_MAX:
            raise UserError(f"{where}: model {name} = {value}: expected 0 to {OTHER_INT_MAX}")
        if type(value) is float and not math.isfinite(value):
            raise UserError(f"{where}: model {name} = {value}: expected a finite number")


def model_bytes(kind: str, m: dict) -> int:
    """Bytes a model of this config takes when loaded (float32 weights, once as the module and
    once as the state dict read from disk), plus one forward's attention scores. An upper
    estimate; for kinds it does not know, the square of the sum of the whole numbers, x16."""
    ints = {k: v for k, v in m.items() if type(v) is int}
    if kind == "gpt":
        v, t, n, e = (ints.get(k, 1) for k in ("vocab_size", "block_size", "n_layer", "n_embd"))
        params = 2 * v * e + t * e + n * (12 * e * e + 13 * e) + 2 * e
        return 8 * params + 4 * t * t * ints.get("n_head", 1)
    if kind == "seq2seq":
        s, g, e, h, a = (ints.get(k, 1) for k in ("src_vocab", "tgt_vocab", "emb", "hidden",
                                                   "attn_hidden"))  # fmt: skip
        params = (s + g) * e + 8 * (e + h) * h + 12 * (e + 3 * h) * h + 4 * h * a + 2 * h * g
        return 8 * params
    return 16 * sum(ints.values()) ** 2


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo in bytes, or None where there is no such file."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**28 else f"{n / 2**20:.0f} MiB"


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
