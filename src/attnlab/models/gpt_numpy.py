"""A GPT's cached decoding in NumPy: the float32 CPU path of ``GPT.generate``.

``NumpyDecoder`` does ``attnlab.models.gpt._Decoder``'s job (prefill a window, then one token per
step) on weights copied once per ``generate`` call, through ``attnlab.nn.kv_cache_numpy``'s
functions: a NumPy op costs about a microsecond, a torch op several, and a small model's
decoding step is mostly calls. Nothing here imports the model's module: it reads a ``GPT``'s
attributes (the tests hold its logits against the model's forward).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from torch import Tensor

from ..errors import UserError
from ..nn.decode import position_table
from ..nn.kv_cache_numpy import (
    GELU_SCALE,
    GeluRow,
    NumpyAttention,
    NumpyKV,
    as_array,
    attend,
    attend_one,
    causal_bias,
    folded,
    gelu_scaled,
    linear,
    normalize,
    one_blas_thread,
)

if TYPE_CHECKING:
    from .gpt import GPT, Block


class NumpyBlock(NamedTuple):
    """A Block's weights as arrays, each LayerNorm folded into the linear after it
    (``attnlab.nn.kv_cache_numpy``)."""

    eps: tuple[float, float]  # ln_1's and ln_2's
    attn: NumpyAttention
    fc: tuple  # (w_t, b) as linear takes them
    proj: tuple

    @classmethod
    def of(cls, b: Block) -> NumpyBlock:
        return cls(
            (b.ln_1.eps, b.ln_2.eps),
            NumpyAttention.of(b.attn, b.ln_1),
            folded(b.mlp.fc.weight, b.mlp.fc.bias, b.ln_2, out_scale=GELU_SCALE),
            folded(b.mlp.proj.weight, b.mlp.proj.bias, in_scale=GELU_SCALE),
        )

    def __call__(self, x, cache: NumpyKV, rope, bias):
        """Block.forward for the positions after those cached: x (B, T, C) -> (B, T, C)."""
        x += attend(normalize(x, self.eps[0]), self.attn, cache, rope, bias)  # x: the decoder's
        x += linear(gelu_scaled(linear(normalize(x, self.eps[1]), *self.fc)), *self.proj)
        return x

    def step(self, x, cache: NumpyKV, rope, gelu: GeluRow):
        """``__call__`` for one new position per sequence: x (B, C) or (C,) -> the same; gelu:
        the decoder's buffers for the hidden row (B, 4C) or (4C,)."""
        x += attend_one(normalize(x, self.eps[0]), self.attn, cache, rope)
        x += linear(gelu(normalize(x, self.eps[1]), *self.fc), *self.proj)
        return x


class NumpyDecoder:
    """``_Decoder``'s job for a float32 model on the CPU, prefill included, in NumPy on
    weights copied once per ``generate`` call (per-op overhead about a microsecond, against
    torch's several). Logits equal the model's forward on the same window up to float32
    rounding (the tests: ``attnlab.parity`` against a float64 oracle, and greedy tokens)."""

    def __init__(self, model: GPT):
        cfg = model.config
        self.size = cfg.block_size
        self.caches: list[NumpyKV] = []
        self.blocks = [NumpyBlock.of(b) for b in model.blocks]
        self.wte = as_array(model.wte.weight)  # (vocab, C)
        self.eps = model.ln_f.eps
        self.head = folded(model.lm_head.weight, None, model.ln_f)  # ((C, vocab), bias)
        table = position_table(model)
        self.positions = None if table is None else as_array(table)  # (block_size, C)
        self.rope = None
        rotary = model.blocks[0].attn.rotary  # the same angles in every layer
        if rotary is not None:
            cos, sin = rotary.angles(self.size, model.wte.weight)  # (block_size, D) each
            self.rope = as_array(cos)[:, None], as_array(sin)[:, None]  # (block_size, 1, D)

    def __len__(self) -> int:
        return len(self.caches[0]) if self.caches else 0

    def full(self) -> bool:
        return len(self) >= self.size

    def prefill(self, idx: np.ndarray | Tensor) -> Tensor:
        """idx (B, T): a new window from position 0 -> logits (B, vocab) of its last position."""
        ids = np.asarray(idx)
        if ids.min() < 0 or ids.max() >= len(self.wte):  # NumPy would wrap a negative id
            raise UserError(
                f"token ids must be in [0, {len(self.wte)}), got {ids.min()}..{ids.max()}"
            )
        a = self.blocks[0].attn
        self.caches = [NumpyKV(ids.shape[0], a.kv_heads, a.d_k, self.size) for _ in self.blocks]
        hidden = self.blocks[0].fc[0].shape[1]
        self.gelu = GeluRow((hidden,) if ids.shape[0] == 1 else (ids.shape[0], hidden))
        return self._run(ids)

    def step(self, tok: np.ndarray | Tensor) -> Tensor:
        """tok (B,) at the next position -> logits (B, vocab) after it."""
        pos = len(self)
        if pos >= self.size:
            raise UserError(f"sequence of {pos + 1} positions exceeds block_size {self.size}")
        x = self.wte[np.asarray(tok)]  # (B, C), a copy
        if len(x) == 1:
            x = x[0]  # (C,): one sequence's step is vector-matrix products (NumpyKV.kt_one)
        if self.positions is not None:
            x += self.positions[pos]
        rope = None if self.rope is None else (self.rope[0][pos, 0], self.rope[1][pos, 0])
        with one_blas_thread():
            for block, cache in zip(self.blocks, self.caches, strict=True):
                x = block.step(x, cache, rope, self.gelu)
            logits = linear(normalize(x, self.eps), *self.head)
        return torch.from_numpy(logits.reshape(-1, logits.shape[-1]))  # (B, vocab)

    def _run(self, ids: np.ndarray) -> Tensor:
        """ids (B, T) after the cached positions -> logits (B, vocab) of the last one."""
        past, T = len(self), ids.shape[1]
        if past + T > self.size:
            raise UserError(f"sequence of {past + T} positions exceeds block_size {self.size}")
        x = self.wte[ids]  # (B, T, C)
        if self.positions is not None:
            x += self.positions[past : past + T]
        rope = None
        if self.rope is not None:  # cos, sin (T, 1, D) of the new positions
            rope = self.rope[0][past : past + T], self.rope[1][past : past + T]
        bias = causal_bias(T, past)
        with one_blas_thread():
            for block, cache in zip(self.blocks, self.caches, strict=True):
                x = block(x, cache, rope, bias)
            return torch.from_numpy(linear(normalize(x[:, -1], self.eps), *self.head))
