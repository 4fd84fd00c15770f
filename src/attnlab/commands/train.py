"""``attnlab train gpt|seq2seq``: train a model into a run directory."""

from __future__ import annotations

from ..catalog import ATTENTION_KINDS, DEVICES, POSITIONS, PRESETS
from ..errors import UserError
from ._args import bounded_float, nonneg_int, positive_float, positive_int, progress_wanted

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


def _common(p, default_out: str) -> None:
    p.add_argument(
        "--out", default=default_out, metavar="DIR", help=f"run directory (default {default_out})"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its checkpoint"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the run already in --out (without it, an existing run is never overwritten)",
    )
    p.add_argument("--max-iters", type=positive_int)
    p.add_argument("--max-seconds", type=positive_float, help="stop after this much training time")
    p.add_argument("--batch-size", type=positive_int)
    p.add_argument("--lr", type=positive_float)
    p.add_argument("--eval-interval", type=positive_int)
    p.add_argument("--seed", type=nonneg_int)
    p.add_argument("--device", choices=DEVICES)


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
    g.add_argument("--preset", default="tiny", choices=list(PRESETS))
    _common(g, "runs/gpt")
    g.add_argument("--block-size", type=positive_int)
    g.add_argument("--n-layer", type=positive_int)
    g.add_argument("--n-head", type=positive_int)
    g.add_argument("--n-embd", type=positive_int)
    g.add_argument("--dropout", type=bounded_float(0, 0.99))
    g.add_argument("--pos", choices=POSITIONS)
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
        description="Train a seq2seq model on generated dates ('3 March 2021', '03/03/21', "
        "'2021年3月3日', ...) -> '2021-03-03'. Same trainer as the GPT: progress bar, eval "
        "(exact match on held-out dates), atomic checkpoints, --resume.",
    )
    q.add_argument(
        "--attention",
        choices=ATTENTION_KINDS,
        help="attention kind (default bahdanau; a resumed run keeps its own)",
    )
    _common(q, "runs/seq2seq")
    q.add_argument("--hidden", type=positive_int, help="encoder width per direction (default 64)")
    q.add_argument("--emb", type=positive_int, help="embedding width (default 32)")
    q.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any Seq2SeqConfig or TrainConfig field"
    )
    q.set_defaults(run=run_seq2seq)


TRAIN_FLAGS = ("max_iters", "batch_size", "lr", "eval_interval", "seed", "device", "max_seconds")


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
    from ..models import GPTConfig
    from ..train.lm import LMRunConfig, train_lm
    from ..train.rundir import is_main_process

    model, train = parse_sets(a.set, GPTConfig, {"vocab_size"})
    model.update(_flags(a, ("block_size", "n_layer", "n_head", "n_embd", "dropout", "pos")))
    train.update(_flags(a, (*TRAIN_FLAGS, "context_parallel")))
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
    if is_main_process():  # under torchrun only rank 0 reports
        last = result.evals[-1] if result.evals else {}
        loss, ppl = last.get("val_loss", float("nan")), last.get("val_ppl", float("nan"))
        print(
            f"{_state(result)}: iter {result.iters}, val loss {loss:.4f} (ppl {ppl:.2f}), "
            f"{result.tokens_per_s:,.0f} tokens/s; run in {a.out}"
        )
    return 130 if result.interrupted else 0


def run_seq2seq(a) -> int:
    from ..models import Seq2SeqConfig
    from ..train.seq2seq import Seq2SeqRunConfig, train_seq2seq

    model, train = parse_sets(a.set, Seq2SeqConfig, {"src_vocab", "tgt_vocab", "attention"})
    model.update(_flags(a, ("hidden", "emb")))
    train.update(_flags(a, TRAIN_FLAGS))
    cfg = Seq2SeqRunConfig(
        out=a.out,
        attention=a.attention,
        model=model,
        train=train,
        resume=a.resume,
        force=a.force,
        progress=progress_wanted(),
    )
    result = train_seq2seq(cfg)
    last = result.evals[-1] if result.evals else {}
    print(
        f"{_state(result)}: iter {result.iters}, val exact match "
        f"{100 * last.get('exact_match', 0):.2f}%, per char {100 * last.get('char_acc', 0):.2f}%; "
        f"run in {a.out}"
    )
    return 130 if result.interrupted else 0


def _state(result) -> str:
    return "interrupted; resume with --resume" if result.interrupted else "done"
