"""A small GPT: a character-level causal transformer that trains on a CPU in minutes.

After nanoGPT's ``model.py`` (Karpathy) and GPT-2 (Radford et al., 2019): token embedding,
positions (learned, sinusoidal or rotary), n pre-LayerNorm blocks of causal multi-head attention
and an MLP with residual connections, a final LayerNorm, and an output head tied to the token
embedding. Attention is ``attnlab.nn.MultiHeadAttention`` (torch's fused kernel unless the
weights are asked for). ``generate`` decodes with a key/value cache (for a float32 model on
the CPU, in NumPy: ``attnlab.nn.kv_cache_numpy``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..catalog import POSITIONS
from ..config import from_dict as strict_from_dict
from ..errors import UserError
from ..nn import (
    KVCache,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    SinusoidalPositionalEncoding,
)
from ..nn.decode import AttentionStep, attention_step, linear_t, one_thread
from ..nn.decode import position_table as _position_table
from .gpt_numpy import NumpyDecoder as _NumpyDecoder


@dataclass
class GPTConfig:
    """A GPT's shape: vocabulary, context length (``block_size``), layers, heads (and key/value
    heads for grouped-query attention), width, dropout, biases and the kind of positions."""

    vocab_size: int = 65
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_kv_head: int | None = None  # < n_head: grouped-query attention
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    pos: str = "learned"  # "learned" | "sinusoidal" | "rope"

    def __post_init__(self) -> None:
        if self.pos not in POSITIONS:
            raise UserError(f"pos must be one of {POSITIONS}, got {self.pos!r}")
        if self.n_embd % self.n_head:
            raise UserError(f"n_head ({self.n_head}) must divide n_embd ({self.n_embd})")
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be >= 1, got {getattr(self, name)}")

    @classmethod
    def from_dict(cls, d: dict) -> GPTConfig:
        return strict_from_dict(cls, d)

    def to_dict(self) -> dict:
        return asdict(self)


def _drop(x: Tensor, p: float, training: bool) -> Tensor:
    """Dropout, or nothing at all when p = 0 or evaluating (no call when decoding)."""
    return F.dropout(x, p, training) if p > 0 and training else x


class MLP(nn.Module):
    """The feed-forward half of a block: x ``(B, T, C)`` -> Linear(C, 4C), GELU, Linear(4C, C),
    dropout -> ``(B, T, C)``."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.p_drop = cfg.dropout

    def forward(self, x: Tensor) -> Tensor:
        return _drop(self.proj(F.gelu(self.fc(x))), self.p_drop, self.training)


class Block(nn.Module):
    """One pre-LayerNorm transformer block: x + attention(LN(x)), then x + MLP(LN(x)).

    forward: x ``(B, T, C)`` -> (x ``(B, T, C)``, weights ``(B, H, T, S)`` or None); with a
    ``cache`` x holds the positions after those cached (S = cached + T)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = MultiHeadAttention(
            cfg.n_embd,
            cfg.n_head,
            cfg.n_kv_head,
            bias=cfg.bias,
            dropout=cfg.dropout,
            rope=cfg.pos == "rope",
        )
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)
        self.p_drop = cfg.dropout

    def forward(self, x: Tensor, need_weights: bool = False, cache: KVCache | None = None, cp=None):
        h = self.ln_1(x)
        a = self.attn(
            h, is_causal=True, need_weights=need_weights, cache=cache, context_parallel=cp
        )
        a, w = a if need_weights else (a, None)
        x = x + _drop(a, self.p_drop, self.training)
        x = x + self.mlp(self.ln_2(x))
        return x, w


class GPT(nn.Module):
    """A character-level GPT: token ids ``(B, T)`` -> next-token logits ``(B, T, vocab)``.

    Token embedding (tied to the output head), positions (learned, sinusoidal or rotary),
    ``n_layer`` pre-LayerNorm ``Block``s of causal ``MultiHeadAttention`` (grouped-query when
    ``n_kv_head`` < ``n_head``) and MLP, a final LayerNorm. ``forward(idx, targets)`` returns
    (logits, loss or None), with ``need_weights`` also each layer's weights ``(B, H, T, T)``;
    ``generate`` yields new tokens ``(B,)`` one at a time, decoding with a KV cache. Build one
    with ``GPT(GPTConfig(...))``, or load a trained run with ``attnlab.train.load_run``.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        if cfg.pos == "learned":
            self.wpe: nn.Module | None = LearnedPositionalEmbedding(cfg.block_size, cfg.n_embd)
        elif cfg.pos == "sinusoidal":
            self.wpe = SinusoidalPositionalEncoding(cfg.n_embd, max_len=cfg.block_size)
        else:
            self.wpe = None  # rotary: positions enter inside attention
        self.p_drop = cfg.dropout
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying (Press & Wolf, 2017)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2: scale residual projections by depth
            if name.endswith(("out_proj.weight", "mlp.proj.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        idx: Tensor,
        targets: Tensor | None = None,
        need_weights: bool = False,
        caches: list[KVCache] | None = None,
        context_parallel=None,
    ) -> tuple[Tensor, Tensor | None] | tuple[Tensor, Tensor | None, list[Tensor]]:
        """idx (B, T) token ids -> logits (B, T, vocab), loss (or None), [weights per layer].

        With ``need_weights`` also returns each layer's attention weights (B, H, T, T). With
        ``caches`` (one KVCache per layer) idx continues the cached positions. With
        ``context_parallel`` (``attnlab.nn.ring.ContextParallel``) idx and targets are this
        rank's shard of each sequence: positions stay global and attention runs around the ring;
        the loss is the mean over this shard's tokens.
        """
        B, T = idx.shape
        past = len(caches[0]) if caches else 0
        if past + T > self.config.block_size and self.config.pos == "learned":
            raise UserError(
                f"sequence of {past + T} positions exceeds block_size {self.config.block_size} "
                "(learned positions end there)"
            )
        x = self.wte(idx)  # (B, T, C)
        cp = context_parallel
        if self.wpe is not None:
            pos = None if cp is None else cp.positions(T, idx.device)
            x = self.wpe(x, offset=past, positions=pos)
        x = _drop(x, self.p_drop, self.training)
        weights = []
        for i, block in enumerate(self.blocks):
            cache = None if caches is None else caches[i]
            x, w = block(x, need_weights=need_weights, cache=cache, cp=cp)
            weights.append(w)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return (logits, loss, weights) if need_weights else (logits, loss)

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
        """Yield new tokens (B,) one at a time after the prompt idx (B, T).

        With the cache, each step feeds only the newest token; when the context reaches
        block_size the window slides: the cache is rebuilt from the last block_size // 2 tokens.
        ``temperature`` 0 is greedy. Without the cache, every step re-runs the last block_size
        tokens (what nanoGPT's generate does), under ``torch.inference_mode``.
        """
        if idx.shape[1] == 0:
            raise UserError("generate needs a prompt of at least one token")
        bs = self.config.block_size
        with torch.inference_mode():
            decoder = _decoder(self) if use_cache else None
        B, n = idx.shape
        context = torch.empty((B, n + max_new_tokens), dtype=idx.dtype, device=idx.device)
        context[:, :n] = idx  # filled in place: no copy of the whole context per token
        ids = context.numpy() if context.device.type == "cpu" else None  # the same memory
        for _ in range(max_new_tokens):
            if isinstance(decoder, _NumpyDecoder):  # no torch ops: no inference mode to enter
                logits = _cached_logits(decoder, ids, n, bs)
            else:
                with torch.inference_mode():
                    if decoder is None:
                        logits = self(context[:, max(0, n - bs) : n])[0][:, -1]
                    else:
                        logits = _cached_logits(decoder, context, n, bs)
            nxt = sample_next(logits, temperature, top_k, top_p, generator)  # (B,)
            if ids is None:
                context[:, n] = nxt
            else:  # NumPy's assignment costs a fraction of torch's
                ids[:, n] = nxt.numpy()
            n += 1
            yield nxt


def _cached_logits(decoder, context, n: int, bs: int) -> Tensor:
    """Logits (B, vocab) after the first n tokens of context (a Tensor for ``_Decoder``, an
    array for ``_NumpyDecoder``) from a decoder that holds all but the last: the first window,
    or a new one from the last bs // 2 once the cache holds bs."""
    if len(decoder) == 0 or decoder.full():
        return decoder.prefill(context[:, max(0, n - (bs if len(decoder) == 0 else bs // 2)) : n])
    return decoder.step(context[:, n - 1])


def _layer_norm(ln: nn.LayerNorm) -> tuple:
    """F.layer_norm's arguments after the input."""
    return ln.normalized_shape, ln.weight, ln.bias, ln.eps


class _BlockStep(NamedTuple):
    """A Block's tensors, gathered once per decoding run (see ``attnlab.nn.decode``)."""

    ln_1: tuple
    attn: AttentionStep
    ln_2: tuple
    fc: tuple[Tensor, Tensor | None]  # (weight.t(), bias), as linear_t takes them
    proj: tuple[Tensor, Tensor | None]

    @classmethod
    def of(cls, b: Block) -> _BlockStep:
        fc, proj = b.mlp.fc, b.mlp.proj
        return cls(
            _layer_norm(b.ln_1),
            AttentionStep.of(b.attn),
            _layer_norm(b.ln_2),
            (fc.weight.t(), fc.bias),
            (proj.weight.t(), proj.bias),
        )

    def __call__(self, x: Tensor, cache: KVCache, rope: tuple[Tensor, Tensor] | None) -> Tensor:
        """Block.forward for one new position: x (B, C) -> (B, C)."""
        x = x + attention_step(F.layer_norm(x, *self.ln_1), self.attn, cache, rope)
        h = F.gelu(linear_t(F.layer_norm(x, *self.ln_2), *self.fc))  # (B, 4C)
        return x + linear_t(h, *self.proj)


class _Decoder:
    """Cached decoding of an evaluating GPT, one token per step, without nn.Module calls
    (any device and dtype; ``_NumpyDecoder`` is the float32 CPU one).

    ``prefill`` runs a window through the model (filling fresh preallocated KVCaches of
    block_size positions, one per layer); each ``step`` then feeds one token per sequence through
    the tensors gathered here: per-call overhead, not arithmetic, bounds a small model's
    decoding on a CPU. Its logits equal the model's with the same caches.
    """

    def __init__(self, model: GPT):
        cfg = model.config
        self.model, self.size = model, cfg.block_size
        self.caches: list[KVCache] = []
        self.blocks = [_BlockStep.of(b) for b in model.blocks]
        self.ln_f = _layer_norm(model.ln_f)
        self.wte, self.head_t = model.wte.weight, model.lm_head.weight.t()
        self.positions = _position_table(model)  # (block_size, C), or None
        self.rotary = model.blocks[0].attn.rotary  # the same angles in every layer

    def __len__(self) -> int:
        return len(self.caches[0]) if self.caches else 0

    def full(self) -> bool:
        return len(self) >= self.size

    def prefill(self, idx: Tensor) -> Tensor:
        """idx (B, T): a new window from position 0 -> logits (B, vocab) of its last position."""
        self.caches = [KVCache(self.size) for _ in self.blocks]
        return self.model(idx, caches=self.caches)[0][:, -1]

    def step(self, tok: Tensor) -> Tensor:
        """tok (B,) at the next position -> logits (B, vocab) after it."""
        pos = len(self)
        with one_thread():
            x = F.embedding(tok, self.wte)  # (B, C)
            rope = None
            if self.positions is not None:
                x = x + self.positions[pos]
            if self.rotary is not None:
                cos, sin = self.rotary.angles(1, x, offset=pos)  # (1, D) each
                rope = cos[0], sin[0]
            for block, cache in zip(self.blocks, self.caches, strict=True):
                x = block(x, cache, rope)
            return linear_t(F.layer_norm(x, *self.ln_f), self.head_t)  # (B, vocab)


def _decoder(model: GPT) -> _Decoder | _NumpyDecoder:
    """The NumPy decoder for a float32 model on the CPU (a NumPy op costs a fraction of a torch
    op's dispatch), else the torch one."""
    p = model.wte.weight
    if p.device.type == "cpu" and p.dtype == torch.float32:
        return _NumpyDecoder(model)
    return _Decoder(model)


def sample_next(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """One token per row of logits (B, vocab): greedy at temperature 0, else sampled after
    top-k and nucleus (top-p) filtering."""
    if temperature < 0:
        raise UserError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        if not 0 < top_p <= 1:
            raise UserError(f"top_p must be in (0, 1], got {top_p}")
        sorted_logits, order = torch.sort(logits, descending=True)
        cum = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
        drop = (
            cum - torch.softmax(sorted_logits, dim=-1) > top_p
        )  # keep the smallest set reaching p
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
