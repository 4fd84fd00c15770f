"""attnlab's attention inside transformers models: ``model.set_attn_implementation("attnlab")``.

transformers looks up a model's attention function by name (``AttentionInterface``). ``register``
adds three names:

- ``"attnlab"``: ``attnlab.nn.functional.scaled_dot_product_attention`` (torch, returns weights)
- ``"attnlab-ref"``: ``attnlab.ref.scaled_dot_product_attention``, the NumPy reference, in
  float64 (inference only: NumPy has no gradients)

``register_learner(fn, name)`` adds a learner's own NumPy ``scaled_dot_product_attention(Q, K, V,
mask=False)`` (the course's exercise: Q ``(T, d)``, K ``(S, d)``, V ``(S, d_v)``, ``mask=True``
for causal), called per sequence and head.

Each name also gets a mask function that always builds the full boolean mask (True = may
attend, ``(B, 1, T, S)``): transformers skips masks for implementations it does not know.
Every function has transformers' signature ``(module, query (B, H, T, D), key (B, Hkv, S, D),
value, attention_mask, scaling=None, dropout=0.0, **kwargs) -> (out (B, T, H, D), weights)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from ._need import transformers


def _bool_mask(mask: Tensor | None) -> Tensor | None:
    """transformers' mask as attnlab's: bool stays (True = may attend); a float mask of 0 and
    large negatives (eager's) becomes True where 0."""
    if mask is None or mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2


def attnlab_attention(
    module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs
) -> tuple[Tensor, Tensor]:
    """attnlab.nn's attention in transformers' calling convention (GQA by key heads)."""
    from ..nn.functional import scaled_dot_product_attention

    out, weights = scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=_bool_mask(attention_mask),
        dropout_p=dropout if module.training else 0.0,
        scale=scaling,
        enable_gqa=key.shape[1] != query.shape[1],
        return_weights=True,
    )
    return out.transpose(1, 2).contiguous(), weights  # (B, T, H, D), (B, H, T, S)


def reference_attention(
    module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs
) -> tuple[Tensor, Tensor]:
    """attnlab.ref's NumPy attention in float64, back in the query's dtype (no gradients)."""
    from ..ref import scaled_dot_product_attention

    mask = _bool_mask(attention_mask)
    out, weights = scaled_dot_product_attention(
        query.detach().double().cpu().numpy(),
        key.detach().double().cpu().numpy(),
        value.detach().double().cpu().numpy(),
        attn_mask=None if mask is None else mask.cpu().numpy(),
        scale=scaling,
        enable_gqa=key.shape[1] != query.shape[1],
        return_weights=True,
    )
    back = torch.from_numpy(np.ascontiguousarray(out)).to(query.dtype).to(query.device)
    w = torch.from_numpy(weights).to(query.dtype).to(query.device)
    return back.transpose(1, 2).contiguous(), w


def learner_attention(fn: Callable) -> Callable:
    """A learner's ``scaled_dot_product_attention(Q, K, V, mask=False)`` (NumPy, one sequence
    and head: Q ``(T, d)``, mask=True causal) as a transformers attention function.

    The function knows only two masks, so the model's mask must be one of them (causal, or
    none), and its scaling 1/sqrt(d); anything else is a ValueError that says so."""

    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
        B, H, T, D = query.shape
        S = key.shape[-2]
        causal = _learner_mask(_bool_mask(attention_mask), T, S)
        if scaling is not None and abs(scaling - D**-0.5) > 1e-12 * D**-0.5:
            raise ValueError(f"a learner's function scales by 1/sqrt(d); this model uses {scaling}")
        group = H // key.shape[1]
        q, k, v = (t.detach().double().cpu().numpy() for t in (query, key, value))
        out = np.empty((B, H, T, value.shape[-1]))
        for b in range(B):
            for h in range(H):
                out[b, h] = fn(q[b, h], k[b, h // group], v[b, h // group], mask=causal)
        back = torch.from_numpy(out).to(query.dtype).to(query.device)
        return back.transpose(1, 2).contiguous(), None

    return attention


def _learner_mask(mask: Tensor | None, T: int, S: int) -> bool:
    """True for the causal mask (aligned to the last keys), False for none or all-True."""
    if mask is None or bool(mask.all()):
        return False
    causal = torch.ones(T, S, dtype=torch.bool, device=mask.device).tril(S - T)
    if T == S and bool((mask == causal).all()):
        return True
    raise ValueError(
        "a learner's attention function knows the causal mask or none; this call's mask is "
        "neither (padding, or cached decoding): use 'attnlab' or 'attnlab-ref' instead"
    )


def _full_mask(*args, **kwargs):
    """transformers' sdpa mask, never skipped: the boolean (B, 1, T, S) mask every time."""
    from transformers.masking_utils import sdpa_mask

    kwargs["allow_is_causal_skip"] = False
    return sdpa_mask(*args, **kwargs)


def _register(name: str, fn: Callable) -> str:
    tf = transformers()
    from transformers.masking_utils import AttentionMaskInterface

    tf.AttentionInterface.register(name, fn)
    AttentionMaskInterface.register(name, _full_mask)
    return name


def register() -> tuple[str, str]:
    """Register ``"attnlab"`` and ``"attnlab-ref"`` with transformers; returns the names."""
    return _register("attnlab", attnlab_attention), _register("attnlab-ref", reference_attention)


def register_learner(fn: Callable, name: str = "learner") -> str:
    """Register a learner's NumPy attention function under ``name``; returns the name."""
    return _register(name, learner_attention(fn))
