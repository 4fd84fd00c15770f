"""``attnlab compare lm|seq2seq``: competing models on the same data and time budget.

- ``compare_lm``: transformer vs RNN, LSTM, GRU: parameters, training tokens/s, validation loss
  and perplexity, and a sample from each (the course's comparison table, measured).
- ``compare_seq2seq``: every attention kind and the no-attention baseline on dates: exact
  match on unseen test dates, overall and by input length.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from ..catalog import SEQ2SEQ_TRAIN as DEFAULT_TRAIN
from ..data import CharTokenizer, TokenData, load_corpus
from ..data.dates import DateSplits, examples
from ..models import ATTENTION_KINDS, GPT, CharRNN, GPTConfig, RNNConfig, Seq2Seq, Seq2SeqConfig
from ..tables import text_table
from .date_task import SRC, TGT, DateTask, accuracy
from .lm import LMTask
from .trainer import TrainConfig, Trainer


@dataclass
class LMRow:
    model: str
    params: int
    iters: int
    tokens_per_s: float
    val_loss: float
    val_ppl: float
    sample: str


KINDS = ("transformer", "rnn", "lstm", "gru")  # compare_lm's models, in table order


def _models(vocab: int, block: int) -> dict[str, torch.nn.Module]:
    return {
        "transformer": GPT(
            GPTConfig(vocab_size=vocab, block_size=block, n_layer=3, n_head=4, n_embd=96)
        ),
        "rnn": CharRNN(
            RNNConfig("rnn", vocab, n_embd=64, n_hidden=384, n_layer=2, block_size=block)
        ),
        "lstm": CharRNN(
            RNNConfig("lstm", vocab, n_embd=64, n_hidden=192, n_layer=2, block_size=block)
        ),
        "gru": CharRNN(
            RNNConfig("gru", vocab, n_embd=64, n_hidden=224, n_layer=2, block_size=block)
        ),
    }


def compare_lm(
    corpus: str | None = None,
    budget_seconds: float = 60.0,
    seed: int = 0,
    block: int = 64,
    progress: bool = True,
    kinds: tuple[str, ...] = KINDS,
) -> list[LMRow]:
    text = load_corpus(corpus)
    tok = CharTokenizer.from_text(text)
    data = TokenData.from_text(text, tok)
    task = LMTask(data, block)
    rows = []
    for name in kinds:
        torch.manual_seed(seed)
        model = _models(tok.vocab_size, block)[name]
        # the budget is in seconds, so the LR decays over the time budget, not iterations
        cfg = TrainConfig(
            max_iters=10**9,
            batch_size=16,
            lr=2e-3,
            min_lr=2e-4,
            decay_by_time=True,
            warmup_iters=50,
            eval_interval=10**9,
            eval_iters=50,
            log_interval=10**9,
            max_seconds=budget_seconds,
            seed=seed,
        )
        res = Trainer(cfg, None, progress=progress).fit(model, task)
        val = res.evals[-1]["val_loss"]
        prompt = torch.tensor([tok.encode(text[:1])])
        g = torch.Generator().manual_seed(seed)
        sample = text[:1] + tok.decode(
            torch.cat(list(model.eval().generate(prompt, 80, 0.8, generator=g))).tolist()
        )
        rows.append(
            LMRow(name, model.num_params(), res.iters, res.tokens_per_s, val, math.exp(val), sample)
        )
    return rows


def estimate_lm_seconds(
    corpus: str | None, budget_seconds: float, block: int = 64, kinds: tuple[str, ...] = KINDS
) -> float:
    """About how long ``compare_lm`` will take here: each model's budget plus its two
    evaluations (2 x 2 x 50 forward passes of batch 16, timed now on one batch each) and its
    80-token sample (timed on one step)."""
    import time

    vocab = CharTokenizer.from_text(load_corpus(corpus)).vocab_size
    models = _models(vocab, block)
    x, one = torch.zeros(16, block, dtype=torch.long), torch.zeros(1, 1, dtype=torch.long)
    total = 0.0
    with torch.no_grad():
        for name in kinds:
            m = models[name].eval()
            m(x)  # warm up
            t0 = time.perf_counter()
            m(x)
            t1 = time.perf_counter()
            m(one)
            t2 = time.perf_counter()
            total += budget_seconds + 200 * (t1 - t0) + 80 * (t2 - t1)
    return total


def format_rows(rows: list[LMRow]) -> str:
    head = ("model", "params", "iters", "tokens/s", "val loss", "val ppl", "sample")
    body = [
        (
            r.model,
            f"{r.params:,}",
            str(r.iters),
            f"{r.tokens_per_s:,.0f}",
            f"{r.val_loss:.3f}",
            f"{r.val_ppl:.2f}",
            r.sample.replace("\n", "⏎")[:60],
        )
        for r in rows
    ]
    return text_table(head, body)


# ---- seq2seq: attention kinds on dates ---------------------------------------------------


BUCKETS = ((0, 10), (11, 15), (16, 20), (21, 25), (26, 99))


@dataclass
class S2SRow:
    attention: str
    params: int
    iters: int
    seconds: float
    exact: float
    char_acc: float
    by_length: dict[str, float]


def compare_seq2seq(
    budget_seconds: float = 60.0,
    seed: int = 0,
    progress: bool = True,
    kinds=ATTENTION_KINDS,
    n_test: int = 2000,
) -> list[S2SRow]:
    splits = DateSplits.make(seed)
    test = examples(splits.test[:n_test], seed + 2)
    task = DateTask(splits, seed, n_val=200)
    rows = []
    for kind in kinds:
        torch.manual_seed(seed)
        model = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), attention=kind))
        train = TrainConfig.from_dict(
            {
                **DEFAULT_TRAIN,
                "max_iters": 10**9,
                "eval_interval": 10**9,
                "max_seconds": budget_seconds,
                "decay_by_time": True,  # the budget is in seconds: decay the LR over it
                "seed": seed,
            }
        )
        start = time.perf_counter()
        res = Trainer(train, None, progress=progress).fit(model, task)
        seconds = time.perf_counter() - start
        model.eval()
        acc = accuracy(model, test)
        by = {}
        for lo, hi in BUCKETS:
            part = [p for p in test if lo <= len(p[0]) <= hi]
            if part:
                by[f"{lo}-{hi}" if hi < 99 else f"{lo}+"] = accuracy(model, part)["exact_match"]
        rows.append(
            S2SRow(
                kind,
                model.num_params(),
                res.iters,
                seconds,
                acc["exact_match"],
                acc["char_acc"],
                by,
            )
        )
    return rows


def format_comparison(rows: list[S2SRow]) -> str:
    buckets = list(rows[0].by_length) if rows else []
    head = [
        "attention",
        "params",
        "iters",
        "train s",
        "exact",
        "per char",
        *[f"len {b}" for b in buckets],
    ]
    body = [
        [
            r.attention,
            f"{r.params:,}",
            str(r.iters),
            f"{r.seconds:.0f}",
            f"{100 * r.exact:.2f}%",
            f"{100 * r.char_acc:.2f}%",
            *[f"{100 * r.by_length.get(b, float('nan')):.1f}%" for b in buckets],
        ]
        for r in rows
    ]
    return (
        text_table(head, body)
        + "\n(exact match on unseen test dates, by input length in characters)"
    )
