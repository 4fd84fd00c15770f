"""``attnlab compare lm|seq2seq``: competing models on the same data and time budget."""

from __future__ import annotations

import sys

from ._args import nonneg_int, positive_float, progress_wanted
from ._threads import add_threads, apply_threads

NAME = "compare"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="train competing models on the same budget and tabulate them",
        description="'attnlab compare lm': transformer vs RNN, LSTM and GRU character models on "
        "the same data and time budget (params, tokens/s, val loss, perplexity, a sample). "
        "'attnlab compare seq2seq': every attention kind and the no-attention baseline on dates. "
        "The budget counts training steps only, not evaluation.",
    )
    p.add_argument("what", choices=["lm", "seq2seq"])
    p.add_argument("--corpus", metavar="FILE", help="UTF-8 text (lm only; default: built-in)")
    p.add_argument(
        "--budget-seconds",
        type=positive_float,
        default=60.0,
        help="training time per model (default 60)",
    )
    add_threads(p)
    p.add_argument("--seed", type=nonneg_int, default=0, help="random seed of every model")
    p.set_defaults(run=run)


def run(a) -> int:
    apply_threads(a.threads)
    if a.what == "lm":
        from ..train.compare import KINDS, compare_lm, estimate_lm_seconds, format_rows

        guess = estimate_lm_seconds(a.corpus, a.budget_seconds)
        print(
            f"comparing {len(KINDS)} models, {a.budget_seconds:g} s of training each, plus "
            f"evaluation and a sample: about {_duration(guess)} here (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        rows = compare_lm(a.corpus, a.budget_seconds, a.seed, progress=progress_wanted())
        print(f"same data, {a.budget_seconds:g} s of training each, block 64, batch 16\n")
        print(format_rows(rows))
        return 0
    from ..models import ATTENTION_KINDS
    from ..train.seq2seq import compare_seq2seq, format_comparison

    n = len(ATTENTION_KINDS)  # the no-attention baseline ("none") included
    print(
        f"comparing {n} models, {a.budget_seconds:g} s of training each: at least "
        f"{_duration(n * a.budget_seconds)}, plus evaluation on 2,000 test dates each",
        file=sys.stderr,
        flush=True,
    )
    rows = compare_seq2seq(a.budget_seconds, a.seed, progress=progress_wanted())
    print(format_comparison(rows))
    return 0


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"
