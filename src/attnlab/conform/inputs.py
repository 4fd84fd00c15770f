"""The inputs of one case: drawn in float64, rounded to the case's dtype, handed to the function
as torch tensors or NumPy arrays, and kept in float64 exactly as the function saw them (the
reference is computed from those, so rounding the inputs costs the function nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import ref
from .cases import Case

TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


EXTRA = ("alibi_slopes", "key_lengths", "cache_seqlens")  # opt-in arrays, passed by these names


@dataclass
class Inputs:
    """``seen``: float64 (and bool) NumPy arrays q, k, v, mask as the function receives them."""

    case: Case
    seen: dict[str, np.ndarray]

    def kwargs(self, args: dict | None = None) -> dict:
        """Keyword arguments of the call: only those that differ from torch's defaults, plus
        ``scale`` (passed explicitly except in the default_scale feature), and the opt-in rows'
        own; arrays (the mask, lengths, slopes) come from ``args``, the converted inputs."""
        c, args = self.case, args or {}
        kw: dict = {}
        if args.get("mask") is not None:
            kw["attn_mask"] = args["mask"]
        if c.causal:
            kw["is_causal"] = True
        if c.scale_value() is not None:
            kw["scale"] = c.scale_value()
        if c.gqa:
            kw["enable_gqa"] = True
        if c.align != "top_left":
            kw["causal_alignment"] = c.align
        if c.window is not None:
            kw["window_size"] = c.window
        if c.softcap is not None:
            kw["softcap"] = c.softcap
        kw.update({n: args[n] for n in EXTRA if n in args})
        return kw


def _bool_mask(rng: np.random.Generator, shape: tuple[int, ...], dead: bool) -> np.ndarray:
    m = rng.random(shape) < 0.6
    rows = ~m.any(axis=-1)  # make sure every row sees a key ...
    m[rows, rng.integers(0, shape[-1], size=int(rows.sum()))] = True
    if dead:  # ... except the rows chosen to see none
        m[..., 1, :] = False
        m[(0,) * (m.ndim - 2) + (-1,)] = False
    return m


def _float_mask(rng: np.random.Generator, shape: tuple[int, ...], case: Case) -> np.ndarray:
    """Random biases ~N(0, 2^2); blocked entries -inf, or the dtype's most negative number."""
    blocked = ~_bool_mask(rng, shape, case.dead_rows)
    m = rng.standard_normal(shape) * 2.0
    fill = -np.inf if case.mask_fill == "-inf" else float(torch.finfo(TORCH_DTYPES[case.dtype]).min)
    m[blocked] = fill
    return m


def draw(case: Case, rng: np.random.Generator) -> Inputs:
    """Float64 inputs for ``case``, already rounded to its dtype (and back)."""
    sh = case.shapes()
    raw = {
        "q": rng.standard_normal(sh["q"]) * case.qk_std,
        "k": rng.standard_normal(sh["k"]) * case.qk_std,
        "v": rng.standard_normal(sh["v"]) + case.v_mean,
    }
    if case.negative_rows:  # rows whose largest score is about -1e4: exp(-max) overflows
        raw["k"] = np.abs(raw["k"])
        raw["q"][..., ::2, :] = -np.abs(raw["q"][..., ::2, :])
    if case.mask == "bool":
        raw["mask"] = _bool_mask(rng, sh["mask"], case.dead_rows)
    elif case.mask == "float":
        raw["mask"] = _float_mask(rng, sh["mask"], case)
    if case.grads:
        raw["grad_out"] = rng.standard_normal((*sh["q"][:-1], case.dv))
    tdt = TORCH_DTYPES[case.dtype]
    seen = {
        n: a if a.dtype == bool else torch.from_numpy(a).to(tdt).double().numpy()
        for n, a in raw.items()
    }
    seen.update(_extras(case, rng, seen))
    return Inputs(case, seen)


GARBAGE = 50.0  # cache entries past a sequence's length: reading them changes the answer


def _extras(case: Case, rng: np.random.Generator, seen: dict) -> dict[str, np.ndarray]:
    """The opt-in rows' arrays: ALiBi slopes, valid key lengths, cache lengths (whose cache
    past each length is overwritten with garbage in ``seen``)."""
    out: dict[str, np.ndarray] = {}
    if case.alibi:
        out["alibi_slopes"] = ref.alibi_slopes(case.H)
    if case.lengths == "key":
        n = rng.integers(1, case.S + 1, case.B)
        n[0], n[-1] = case.S - 1, 0 if case.B > 2 else n[-1]  # one padded, one empty if B > 2
        out["key_lengths"] = n.astype(np.int64)
    if case.lengths == "cache":
        n = rng.integers(case.T, case.S + 1, case.B)
        n[0] = case.T + (case.S - case.T) // 2  # at least one cache with garbage after it
        out["cache_seqlens"] = n.astype(np.int64)
        for b, length in enumerate(n):
            seen["k"][b, :, length:] = GARBAGE
            seen["v"][b, :, length:] = -GARBAGE
    return out


def _strided_np(x: np.ndarray, name: str) -> np.ndarray:
    """The same values as a non-contiguous view: q transposed from (B, T, H, D), k sliced from
    a wider array (the rest NaN, so reading past the view shows), v transposed in its last two."""
    if name == "q":
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    if name == "k":
        wide = np.full((*x.shape[:-1], 2 * x.shape[-1]), np.nan, dtype=x.dtype)
        wide[..., : x.shape[-1]] = x
        return wide[..., : x.shape[-1]]
    return np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)


def _extra_np(a: np.ndarray, name: str) -> np.ndarray:
    """Lengths as int32, ALiBi slopes as float32 (FlashAttention's dtypes)."""
    return a.astype(np.float32 if name == "alibi_slopes" else np.int32)


def as_numpy(inp: Inputs) -> dict[str, np.ndarray]:
    """q, k, v, mask as NumPy arrays in the case's dtype (for ``--api numpy``)."""
    dt = np.dtype(inp.case.dtype)
    out = {n: _extra_np(inp.seen[n], n) for n in EXTRA if n in inp.seen}
    for n in ("q", "k", "v", "mask"):
        a = inp.seen.get(n)
        if a is None:
            continue
        a = a if a.dtype == bool else a.astype(dt)
        out[n] = _strided_np(a, n) if inp.case.layout == "strided" and n != "mask" else a
    return out


def as_torch(inp: Inputs, device: str) -> dict[str, torch.Tensor]:
    """q, k, v, mask (and grad_out) as tensors in the case's dtype on ``device``; for a
    ``strided`` case q, k, v are views built as in ``_strided_np``."""
    tdt = TORCH_DTYPES[inp.case.dtype]
    out = {}
    for n, a in inp.seen.items():
        t = torch.from_numpy(_extra_np(a, n) if n in EXTRA else a)
        out[n] = t.to(device) if n in EXTRA or a.dtype == bool else t.to(device, tdt)
    if inp.case.layout == "strided":
        q, k, v = out["q"], out["k"], out["v"]
        out["q"] = q.transpose(1, 2).contiguous().transpose(1, 2)
        wide = torch.full((*k.shape[:-1], 2 * k.shape[-1]), float("nan"), dtype=tdt, device=device)
        wide[..., : k.shape[-1]] = k
        out["k"] = wide[..., : k.shape[-1]]
        out["v"] = v.transpose(-1, -2).contiguous().transpose(-1, -2)
    return out
