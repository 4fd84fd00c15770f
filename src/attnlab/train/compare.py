"""``attnlab compare lm``: transformer vs RNN, LSTM, GRU on the same data and time budget.

Fills the course's comparison table with measured numbers: parameters, training tokens/s,
validation loss and perplexity, and a greedy-free sample from each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..data import CharTokenizer, TokenData, load_corpus
from ..models import GPT, CharRNN, GPTConfig, RNNConfig
from ..tables import text_table
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
    kinds: tuple[str, ...] = ("transformer", "rnn", "lstm", "gru"),
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
