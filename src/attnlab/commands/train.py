"""``attnlab train gpt|seq2seq``: train a model into a run directory."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable

from ..catalog import ATTENTION_KINDS, DEVICES, POSITIONS, PRESETS
from ..catalog import SEQ2SEQ_MINUTES as DEFAULT_MINUTES
from ..catalog import SEQ2SEQ_TRAIN as DEFAULT_TRAIN
from ..errors import UserError
from ._args import (
    bounded_float,
    check_outputs,
    nonneg_int,
    positive_float,
    positive_int,
    progress_wanted,
)
from ._threads import add_threads, apply_threads

NAME = "train"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="train a model (gpt, seq2seq) into a run directory",
        description="Train a model: 'attnlab train gpt --help', 'attnlab train seq2seq --help'.",
    )
    tsub = p.add_subparsers(dest="model_kind", metavar="MODEL", required=True)
    _add_gpt(tsub)
    _add_seq2seq(tsub)


def _common(p, default_out: str, default: Callable[[str], str]) -> None:
    """The flags every model kind takes; ``default(field)`` says what an unset training value
    is (the preset's, or the seq2seq default)."""
    p.add_argument(
        "--out", default=default_out, metavar="DIR", help=f"run directory (default {default_out})"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out from its checkpoint (give the same --out)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the run already in --out (without it, an existing run is never overwritten)",
    )
    p.add_argument(
        "--max-iters", type=positive_int, help=f"training steps (default {default('max_iters')})"
    )
    p.add_argument(
        "--max-seconds",
        type=positive_float,
        help="stop after this much training time in this invocation (a resumed run gets its "
        "own), evaluation not counted (default: no limit)",
    )
    p.add_argument("--batch-size", type=positive_int, help=f"default {default('batch_size')}")
    p.add_argument(
        "--lr", type=positive_float, help=f"peak learning rate (default {default('lr')})"
    )
    p.add_argument(
        "--eval-interval",
        type=positive_int,
        help=f"steps between evaluations (default {default('eval_interval')})",
    )
    p.add_argument("--seed", type=nonneg_int, help="default 1337")
    p.add_argument("--device", choices=DEVICES, help="default auto (cuda if torch sees one)")
    add_threads(p)
    p.add_argument(
        "--tensorboard",
        action="store_true",
        default=None,  # unset: a resumed run keeps its own choice
        help="also log losses and LR for TensorBoard into --out/tensorboard (needs the "
        "tensorboard package)",
    )


def _model(what: str, field: str) -> str:
    """Help for a model flag: what it sets and its default (the preset's, tiny's named)."""
    tiny = POSITIONS[0] if field == "pos" else PRESETS["tiny"]["model"][field]  # GPTConfig's
    return f"{what} (default: the preset's; tiny: {tiny})"


def _add_gpt(tsub) -> None:
    g = tsub.add_parser(
        "gpt",
        help="a character-level GPT",
        description="Train a character-level GPT on a UTF-8 text file (default: the Python "
        "reference text that ships with CPython). Writes config.json, tokenizer.json, "
        "checkpoint.pt (atomic), log.jsonl and loss.png into --out. Ctrl-C saves a checkpoint; "
        "--resume continues it. Data-parallel: torchrun --nproc_per_node=2 -m attnlab train gpt",
        epilog="presets: tiny (about a minute on 2 cores), nanogpt-cpu (nanoGPT's CPU recipe), "
        "gpu. Any field: --set n_kv_head=2 --set warmup_iters=200 ...",
    )
    g.add_argument("--corpus", metavar="FILE", help="UTF-8 text file (default: built-in)")
    g.add_argument(
        "--preset",
        default="tiny",
        choices=list(PRESETS),
        help="model size and training recipe (default tiny: "
        + ", ".join(f"{k} {v['train']['max_iters']} iterations" for k, v in PRESETS.items())
        + ")",
    )
    _common(g, "runs/gpt", lambda k: f"the preset's; tiny: {PRESETS['tiny']['train'][k]:g}")
    g.add_argument("--block-size", type=positive_int, help=_model("context length", "block_size"))
    g.add_argument("--n-layer", type=positive_int, help=_model("transformer blocks", "n_layer"))
    g.add_argument("--n-head", type=positive_int, help=_model("attention heads", "n_head"))
    g.add_argument("--n-embd", type=positive_int, help=_model("embedding width", "n_embd"))
    g.add_argument("--dropout", type=bounded_float(0, 0.99), help=_model("dropout", "dropout"))
    g.add_argument("--pos", choices=POSITIONS, help=_model("positions", "pos"))
    g.add_argument(
        "--context-parallel",
        type=positive_int,
        metavar="N",
        help="split each sequence across N processes (ring attention; under torchrun, whose "
        "process count N divides; the rest is data parallel)",
    )
    g.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any GPTConfig or TrainConfig field"
    )
    g.set_defaults(run=run_gpt)


def _add_seq2seq(tsub) -> None:
    q = tsub.add_parser(
        "seq2seq",
        help="an encoder-decoder that turns dates into ISO dates",
        description="Train a seq2seq model on generated dates ('2021年3月3日', '3 March 2021', "
        "'03/03/21', ...) -> '2021-03-03'. Same trainer as the GPT: progress bar, eval "
        "(exact match on held-out dates), atomic checkpoints, --resume.",
    )
    q.add_argument(
        "--attention",
        choices=ATTENTION_KINDS,
        metavar="KIND",
        help=f"attention kind: {', '.join(ATTENTION_KINDS)} (default bahdanau; a resumed run "
        "keeps its own)",
    )
    _common(q, "runs/seq2seq", _seq2seq_default)
    q.add_argument("--hidden", type=positive_int, help="encoder width per direction (default 64)")
    q.add_argument("--emb", type=positive_int, help="embedding width (default 32)")
    q.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any Seq2SeqConfig or TrainConfig field"
    )
    q.set_defaults(run=run_seq2seq)


def _seq2seq_default(key: str) -> str:

    note = f", about {DEFAULT_MINUTES} minutes on 2 CPU cores" if key == "max_iters" else ""
    return f"{DEFAULT_TRAIN[key]:g}{note}"


TRAIN_FLAGS = (
    *("max_iters", "batch_size", "lr", "eval_interval", "seed", "device", "max_seconds"),
    "tensorboard",
)


def parse_sets(items: list[str] | None, model_cls: type, skip: set[str]) -> tuple[dict, dict]:
    """``--set key=value`` pairs -> (model overrides, train overrides), each value parsed as its
    field's type. Unknown keys and values of the wrong type are errors that name them."""
    from ..config import field_types, parse_value
    from ..train import TrainConfig

    model_types = {k: v for k, v in field_types(model_cls).items() if k not in skip}
    train_types = field_types(TrainConfig)
    model, train = {}, {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UserError(f"--set expects KEY=VALUE, got {item!r}")
        if key in model_types:
            model[key] = parse_value(key, raw, model_types[key])
        elif key in train_types:
            train[key] = parse_value(key, raw, train_types[key])
        else:
            raise UserError(
                f"unknown setting {key!r}; model: {sorted(model_types)}; train: {sorted(train_types)}"
            )
    return model, train


def _flags(a, names) -> dict:
    return {k: getattr(a, k) for k in names if getattr(a, k) is not None}


def run_gpt(a) -> int:
    check_outputs((a.out, "--out", "folder", "a run folder"))
    from ..models import GPTConfig
    from ..train.lm import LMRunConfig, train_lm
    from ..train.rundir import is_main_process
    from ..train.trainer import leave_distributed

    model, train = parse_sets(a.set, GPTConfig, {"vocab_size"})
    model.update(_flags(a, ("block_size", "n_layer", "n_head", "n_embd", "dropout", "pos")))
    train.update(_flags(a, (*TRAIN_FLAGS, "context_parallel")))
    apply_threads(a.threads)
    cfg = LMRunConfig(
        out=a.out,
        corpus=a.corpus,
        preset=a.preset,
        model=model,
        train=train,
        resume=a.resume,
        force=a.force,
        progress=progress_wanted(),
    )
    result = train_lm(cfg)
    leave_distributed()  # under torchrun: every rank leaves the process group together
    if is_main_process():  # under torchrun only rank 0 reports
        last = result.evals[-1] if result.evals else {}
        loss, ppl = last.get("val_loss", float("nan")), last.get("val_ppl", float("nan"))
        print(
            f"{_state(result)}: iter {result.iters} ({result.stop_reason}), "
            f"val loss {loss:.4f} (ppl {ppl:.2f})"
        )
        print(f"{result.tokens_per_s:,.0f} tokens/s; run in {a.out}")  # 80 columns: two lines
        _resume_hint(result, "gpt", a.out)
    return 130 if result.interrupted else 0


def run_seq2seq(a) -> int:
    check_outputs((a.out, "--out", "folder", "a run folder"))
    from ..models import Seq2SeqConfig
    from ..train.seq2seq import Seq2SeqRunConfig, train_seq2seq
    from ..train.trainer import leave_distributed

    model, train = parse_sets(a.set, Seq2SeqConfig, {"src_vocab", "tgt_vocab", "attention"})
    model.update(_flags(a, ("hidden", "emb")))
    train.update(_flags(a, TRAIN_FLAGS))
    apply_threads(a.threads)
    cfg = Seq2SeqRunConfig(
        out=a.out,
        attention=a.attention,
        model=model,
        train=train,
        resume=a.resume,
        force=a.force,
        progress=progress_wanted(),
    )
    if not a.resume:
        print(_seq2seq_plan(model, train, a.out), file=sys.stderr)
    result = train_seq2seq(cfg)
    leave_distributed()  # under torchrun: every rank leaves the process group together
    last = result.evals[-1] if result.evals else {}
    print(
        f"{_state(result)}: iter {result.iters} ({result.stop_reason}), val exact match "
        f"{100 * last.get('exact_match', 0):.2f}%, per char {100 * last.get('char_acc', 0):.2f}%"
    )
    print(f"run in {a.out}")
    _resume_hint(result, "seq2seq", a.out)
    return 130 if result.interrupted else 0


def _seq2seq_plan(model: dict, train: dict, out: str) -> str:
    """What a new seq2seq run will do, said before it starts: steps, and for the default model
    and batch the time it takes on 2 CPU cores."""

    iters = train.get("max_iters", DEFAULT_TRAIN["max_iters"])
    line = f"training {iters} iterations into {out}"
    if "max_seconds" in train:  # the clock may stop it first
        line = f"training up to {iters} iterations or {train['max_seconds']:g} s into {out}"
    default_shape = not model and train.get("batch_size", DEFAULT_TRAIN["batch_size"]) == 64
    if default_shape and train.get("device", "auto") != "cuda":
        minutes = DEFAULT_MINUTES * iters / DEFAULT_TRAIN["max_iters"]
        if "max_seconds" in train:
            minutes = min(minutes, train["max_seconds"] / 60)
        took = f"{minutes:.1f} minutes" if minutes >= 1 else f"{60 * minutes:.0f} seconds"
        line += f", about {took} on 2 CPU cores"
    return line + " (Ctrl-C stops with a checkpoint; --resume continues)"


def _state(result) -> str:
    return "interrupted" if result.interrupted else "done"


def _resume_hint(result, kind: str, out: str) -> None:
    """After Ctrl-C: the exact command that continues this run (its own --out)."""
    if result.interrupted:
        print(f"resume with: attnlab train {kind} --out {shlex.quote(out)} --resume")
