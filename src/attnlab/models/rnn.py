"""Recurrent character LMs (RNN, LSTM, GRU): the baselines of the course's comparison table.

Same interface as ``GPT``: ``forward(idx, targets=None) -> (logits, loss)``,
``generate``. The hidden state carries the past, one step at a time (Elman 1990; Hochreiter &
Schmidhuber 1997; Cho et al. 2014).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import from_dict
from ..errors import UserError
from .gpt import sample_next

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


@dataclass
class RNNConfig:
    """A recurrent LM's shape: cell kind (rnn, lstm, gru), vocabulary, embedding and hidden
    widths, layers, dropout and the training window."""

    kind: str = "lstm"
    vocab_size: int = 65
    n_embd: int = 64
    n_hidden: int = 256
    n_layer: int = 2
    dropout: float = 0.0
    block_size: int = 64  # training window (the state is truncated at its edges)

    def __post_init__(self) -> None:
        if self.kind not in CELLS:
            raise UserError(f"kind must be one of {sorted(CELLS)}, got {self.kind!r}")


class CharRNN(nn.Module):
    """A recurrent character LM: ids ``(B, T)`` -> logits ``(B, T, vocab)`` (and the state
    with ``return_state``): embedding, ``n_layer`` RNN/LSTM/GRU layers, a linear head."""

    def __init__(self, cfg: RNNConfig):
        super().__init__()
        self.config = cfg
        self.emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        extra = {"nonlinearity": "tanh"} if cfg.kind == "rnn" else {}
        self.rnn = CELLS[cfg.kind](
            cfg.n_embd,
            cfg.n_hidden,
            cfg.n_layer,
            batch_first=True,
            dropout=cfg.dropout if cfg.n_layer > 1 else 0.0,
            **extra,
        )
        self.head = nn.Linear(cfg.n_hidden, cfg.vocab_size)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(
        self, idx: Tensor, targets: Tensor | None = None, state=None, return_state: bool = False
    ):
        h, state = self.rnn(self.emb(idx), state)  # (B, T, n_hidden)
        logits = self.head(h)  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return (logits, loss, state) if return_state else (logits, loss)

    @torch.no_grad()
    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        generator: torch.Generator | None = None,
        use_cache: bool = True,
    ) -> Iterator[Tensor]:
        logits, _, state = self(idx, return_state=True)
        for _ in range(max_new_tokens):
            nxt = sample_next(logits[:, -1], temperature, top_k, top_p, generator)
            yield nxt
            logits, _, state = self(nxt[:, None], state=state, return_state=True)

    @staticmethod
    def from_dict(d: dict) -> CharRNN:
        return CharRNN(from_dict(RNNConfig, d))

    def config_dict(self) -> dict:
        return asdict(self.config)
