"""Encoder-decoder with attention (or without: the fixed-context baseline).

Encoder: embedding + bidirectional GRU over the source characters (padding packed away).
Decoder: a GRU cell, one output character per step, with ``attention`` one of:

- ``none``: the classic bottleneck (Cho et al., 2014): one fixed context vector (the encoder's
  final states) is fed to every step;
- ``bahdanau`` (Bahdanau et al., 2014): the *previous* decoder state queries the encoder states
  with an additive score; the context joins the RNN input;
- ``luong-dot`` / ``luong-general`` / ``luong-concat`` (Luong et al., 2015): the RNN steps first,
  the *current* state queries the encoder, and the attentional state tanh(W_c [c; h]) predicts
  the output and is fed to the next step's input ("input feeding").

Training uses teacher forcing; ``greedy`` decodes and returns the attention weights per step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..catalog import ATTENTION_KINDS
from ..errors import UserError
from ..nn import AdditiveAttention, LuongAttention


@dataclass
class Seq2SeqConfig:
    """An encoder-decoder's shape: source and target vocabularies, the attention kind (one of
    ``ATTENTION_KINDS``, "none" for the baseline), embedding, hidden and attention widths,
    dropout."""

    src_vocab: int
    tgt_vocab: int
    attention: str = "bahdanau"
    emb: int = 32
    hidden: int = 64  # per encoder direction; the decoder state is 2 * hidden wide
    attn_hidden: int = 64
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.attention not in ATTENTION_KINDS:
            raise UserError(f"attention must be one of {ATTENTION_KINDS}, got {self.attention!r}")

    def to_dict(self) -> dict:
        return asdict(self)


class Seq2Seq(nn.Module):
    """An RNN encoder-decoder with attention (Bahdanau or Luong) or none.

    A bidirectional GRU encodes the source ids ``(B, S)`` into states ``(B, S, 2H)``; a GRU cell
    decodes one target position at a time, attending over them. ``forward(src, src_len,
    tgt_in)`` returns logits ``(B, T, tgt_vocab)`` and the attention weights ``(B, T, S)`` (or
    None); ``greedy`` decodes without targets.
    """

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.config = cfg
        H, D = cfg.hidden, 2 * cfg.hidden  # encoder per direction, decoder width
        self.src_emb = nn.Embedding(cfg.src_vocab, cfg.emb, padding_idx=0)
        self.tgt_emb = nn.Embedding(cfg.tgt_vocab, cfg.emb, padding_idx=0)
        self.encoder = nn.GRU(cfg.emb, H, batch_first=True, bidirectional=True)
        self.init_state = nn.Linear(D, D)
        kind = cfg.attention
        self.attn: nn.Module | None = None
        if kind == "bahdanau":
            self.attn = AdditiveAttention(D, D, cfg.attn_hidden)
        elif kind.startswith("luong"):
            self.attn = LuongAttention(D, D, score=kind.split("-")[1], hidden_dim=cfg.attn_hidden)
            self.combine = nn.Linear(2 * D, D)  # W_c [c; h] -> attentional state
        self.cell = nn.GRUCell(cfg.emb + D, D)  # input: [embedding; context or attentional state]
        self.drop = nn.Dropout(cfg.dropout)
        self.out = nn.Linear(D if kind.startswith("luong") else 2 * D, cfg.tgt_vocab)

    def encode(self, src: Tensor, src_len: Tensor) -> tuple[Tensor, Tensor]:
        """src (B, S) ids, src_len (B,) -> encoder states (B, S, 2H), initial decoder state (B, 2H)."""
        packed = pack_padded_sequence(
            self.src_emb(src), src_len.cpu(), batch_first=True, enforce_sorted=False
        )
        out, h_n = self.encoder(packed)
        states, _ = pad_packed_sequence(
            out, batch_first=True, total_length=src.shape[1]
        )  # (B, S, 2H)
        final = torch.cat([h_n[0], h_n[1]], dim=-1)  # (B, 2H): last forward, first backward state
        return states, torch.tanh(self.init_state(final))

    def step(
        self,
        y_prev: Tensor,
        s: Tensor,
        feed: Tensor,
        states: Tensor,
        src_len: Tensor,
        fixed: Tensor,
    ):
        """One decoder step: returns (logits (B, V), new state, next feed, weights (B, S) or None)."""
        e = self.drop(self.tgt_emb(y_prev))  # (B, emb)
        kind = self.config.attention
        if kind == "none":
            s = self.cell(torch.cat([e, fixed], -1), s)
            return self.out(torch.cat([s, fixed], -1)), s, feed, None
        if kind == "bahdanau":
            c, w = self.attn(s, states, valid_lengths=src_len)  # query: the previous state
            s = self.cell(torch.cat([e, c], -1), s)
            return self.out(torch.cat([s, c], -1)), s, feed, w
        s = self.cell(torch.cat([e, feed], -1), s)  # Luong: step first (input feeding)
        c, w = self.attn(s, states, valid_lengths=src_len)  # query: the current state
        h_tilde = torch.tanh(self.combine(torch.cat([c, s], -1)))
        return self.out(self.drop(h_tilde)), s, h_tilde, w

    def forward(self, src: Tensor, src_len: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor | None]:
        """Teacher forcing: tgt_in (B, T) starts with <sos>; logits (B, T, V), weights (B, T, S)."""
        states, s = self.encode(src, src_len)
        feed = torch.zeros_like(s)
        fixed = s  # the no-attention baseline's one context vector
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            lg, s, feed, w = self.step(tgt_in[:, t], s, feed, states, src_len, fixed)
            logits.append(lg)
            weights.append(w)
        ws = None if weights[0] is None else torch.stack(weights, 1)
        return torch.stack(logits, 1), ws

    @torch.no_grad()
    def greedy(
        self, src: Tensor, src_len: Tensor, sos: int, steps: int, with_probs: bool = False
    ) -> tuple:
        """Greedy decoding for ``steps`` characters: tokens (B, steps), weights (B, steps, S);
        with ``with_probs`` also the probability the model gave each chosen token (B, steps)."""
        states, s = self.encode(src, src_len)
        feed, fixed = torch.zeros_like(s), s
        y = torch.full((src.shape[0],), sos, dtype=torch.long, device=src.device)
        out, weights, probs = [], [], []
        for _ in range(steps):
            lg, s, feed, w = self.step(y, s, feed, states, src_len, fixed)
            p, y = lg.softmax(-1).max(-1)
            out.append(y)
            weights.append(w)
            probs.append(p)
        ws = None if weights[0] is None else torch.stack(weights, 1)
        tokens = torch.stack(out, 1)
        return (tokens, ws, torch.stack(probs, 1)) if with_probs else (tokens, ws)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def sequence_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Cross-entropy of logits (B, T, V) against targets (B, T), padding (id 0) ignored."""
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=0
    )
