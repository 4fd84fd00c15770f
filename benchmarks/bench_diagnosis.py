"""Does the grader name mistakes in code it has never seen? A mutation benchmark.

Right solutions of every exercise, in several styles (loops, vectorised, einsum, float32,
``-1e9`` masking, helper functions, a class), are mutated on the AST by operators that each
make one classic mistake and are labelled with the id it should get (or ``pass`` for a change
that keeps the numbers, or no id). Every mutant is graded in-process by the grader's own judging
(``attnlab.grade.check``'s path: the same cases, twins, versions and ids as ``attnlab grade``)
on each seed, and counted per exercise and per operator:

- **right**: the operator's id is named, and no other specific id;
- **unnamed**: no specific id (a crash or NaN alone is not a name);
- **wrong**: a specific id other than the operator's (the number that must stay 0);
- **still correct**: the mutant passes (counted apart); for ``pass`` operators that is right,
  and a ``pass`` mutant that fails counts as wrong.

A mutant is also run against its unmutated solution on the cases: one whose numbers equal the
right answer (to 1e-9) and still fails is reported (equivalent mutants must pass).

Run: python benchmarks/bench_diagnosis.py [--seeds 2] [--sample N] [--markdown]
Goals (issue 20): 0 named wrong; >= 90% of mutants whose operator has an id named right.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import difflib
import io
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GENERIC = {"crash", "nan_output", "wrong_return"}  # true of a mutant, but not a diagnosis

# ---- right solutions, several styles per exercise -------------------------------------------

SOLUTIONS: dict[str, dict[str, str]] = {
    "softmax_rows": {
        "vectorised": """
import numpy as np
def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "np_functions": """
import numpy as np
def softmax_rows(x):
    shifted = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=1, keepdims=True)
""",
        "loops": """
import math
import numpy as np
def softmax_rows(x):
    out = np.zeros(x.shape)
    for i in range(x.shape[0]):
        m = max(x[i])
        row = [math.exp(v - m) for v in x[i]]
        total = sum(row)
        out[i] = [v / total for v in row]
    return out
""",
        "float32_inplace": """
import numpy as np
def softmax_rows(x):
    z = x.astype(np.float32)
    z = z - z.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z
""",
    },
    "causal_mask": {
        "tril": """
import numpy as np
def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))
""",
        "not_triu": """
import numpy as np
def causal_mask(T):
    hidden = np.triu(np.ones((T, T), dtype=bool), k=1)
    return ~hidden
""",
        "compare": """
import numpy as np
def causal_mask(T):
    i = np.arange(T)
    return i[:, None] >= i[None, :]
""",
        "loops": """
import numpy as np
def causal_mask(T):
    m = np.zeros((T, T), dtype=bool)
    for t in range(T):
        for s in range(T):
            if s <= t:
                m[t, s] = True
    return m
""",
    },
    "scaled_dot_product_attention": {
        "vectorised": """
import numpy as np
def scaled_dot_product_attention(Q, K, V, mask=False):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        T, S = scores.shape
        scores = np.where(np.tril(np.ones((T, S), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V
""",
        "einsum_neg1e9": """
import numpy as np
def scaled_dot_product_attention(Q, K, V, mask=False):
    d = Q.shape[1]
    scores = np.einsum("td,sd->ts", Q, K) / d ** 0.5
    if mask:
        hidden = np.triu(np.ones(scores.shape, dtype=bool), k=1)
        scores = np.where(hidden, -1e9, scores)
    scores = scores - scores.max(axis=1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=1, keepdims=True)
    return np.einsum("ts,sv->tv", w, V)
""",
        "helpers": """
import math
import numpy as np

def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)

def scaled_dot_product_attention(Q, K, V, mask=False):
    scores = np.matmul(Q, K.T) / math.sqrt(K.shape[1])
    if mask:
        allowed = np.tril(np.ones_like(scores, dtype=bool))
        scores = np.where(allowed, scores, -np.inf)
    return np.matmul(softmax(scores), V)
""",
        "float32": """
import numpy as np
def scaled_dot_product_attention(Q, K, V, mask=False):
    Q, K, V = (a.astype(np.float32) for a in (Q, K, V))
    scores = Q @ K.T / np.float32(np.sqrt(Q.shape[-1]))
    if mask:
        scores[np.triu(np.ones(scores.shape, dtype=bool), k=1)] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return w @ V
""",
    },
    "self_attention": {
        "vectorised": """
import numpy as np
def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask:
        T = X.shape[0]
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
""",
        "loops": """
import math
import numpy as np
def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    T, d_k = Q.shape
    weights = np.zeros((T, T))
    for t in range(T):
        scores = [float(Q[t] @ K[s]) / math.sqrt(d_k) for s in range(T)]
        if mask:
            scores = [v if s <= t else -math.inf for s, v in enumerate(scores)]
        m = max(scores)
        ex = [math.exp(v - m) for v in scores]
        total = sum(ex)
        weights[t] = [v / total for v in ex]
    return weights @ V, weights
""",
        "einsum_neg1e9": """
import numpy as np
def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q = np.einsum("td,dk->tk", X, W_Q)
    K = np.einsum("td,dk->tk", X, W_K)
    V = np.einsum("td,dk->tk", X, W_V)
    scores = np.einsum("tk,sk->ts", Q, K) / np.sqrt(Q.shape[1])
    if mask:
        scores = scores + np.triu(np.full(scores.shape, -1e9), k=1)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    return np.einsum("ts,sk->tk", w, V), w
""",
        "class": """
import numpy as np

class Attention:
    def __init__(self, W_Q, W_K, W_V):
        self.W_Q, self.W_K, self.W_V = W_Q, W_K, W_V

    def softmax(self, s):
        s = s - s.max(axis=-1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=-1, keepdims=True)

    def __call__(self, X, mask):
        Q, K, V = X @ self.W_Q, X @ self.W_K, X @ self.W_V
        scores = Q @ K.T / np.sqrt(Q.shape[1])
        if mask:
            future = np.triu(np.ones(scores.shape, dtype=bool), k=1)
            scores = np.where(future, -np.inf, scores)
        w = self.softmax(scores)
        return w @ V, w

def self_attention(X, W_Q, W_K, W_V, mask=False):
    return Attention(W_Q, W_K, W_V)(X, mask)
""",
        "float32": """
import numpy as np
def self_attention(X, W_Q, W_K, W_V, mask=False):
    X, W_Q, W_K, W_V = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(np.float32(Q.shape[-1]))
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
""",
    },
    "multi_head_attention": {
        "reshape": """
import numpy as np
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads
    Q = (X @ W_Q).reshape(T, num_heads, d_k).transpose(1, 0, 2)
    K = (X @ W_K).reshape(T, num_heads, d_k).transpose(1, 0, 2)
    V = (X @ W_V).reshape(T, num_heads, d_k).transpose(1, 0, 2)
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    if mask:
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    heads = w @ V
    concat = heads.transpose(1, 0, 2).reshape(T, d_model)
    return concat @ W_O
""",
        "loops": """
import numpy as np
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    out = np.zeros((T, d_model))
    for h in range(num_heads):
        lo, hi = h * d_k, (h + 1) * d_k
        s = Q[:, lo:hi] @ K[:, lo:hi].T / np.sqrt(d_k)
        if mask:
            s[np.triu_indices(T, k=1)] = -np.inf
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        out[:, lo:hi] = e / e.sum(axis=-1, keepdims=True) @ V[:, lo:hi]
    return out @ W_O
""",
        "helpers_neg1e9": """
import numpy as np

def split(P, h):
    T, D = P.shape
    return P.reshape(T, h, D // h).transpose(1, 0, 2)

def merge(P):
    h, T, d = P.shape
    return P.transpose(1, 0, 2).reshape(T, h * d)

def attend(q, k, v, mask):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if mask:
        T = s.shape[-1]
        s = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -1e9, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    return (w / w.sum(axis=-1, keepdims=True)) @ v

def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    q, k, v = split(X @ W_Q, num_heads), split(X @ W_K, num_heads), split(X @ W_V, num_heads)
    return merge(attend(q, k, v, mask)) @ W_O
""",
        "einsum_float32": """
import numpy as np
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    X, W_Q, W_K, W_V, W_O = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V, W_O))
    T, D = X.shape
    d_k = D // num_heads
    Q = (X @ W_Q).reshape(T, num_heads, d_k)
    K = (X @ W_K).reshape(T, num_heads, d_k)
    V = (X @ W_V).reshape(T, num_heads, d_k)
    s = np.einsum("thd,shd->hts", Q, K) / np.sqrt(np.float32(d_k))
    if mask:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    out = np.einsum("hts,shd->thd", w, V).reshape(T, D)
    return out @ W_O
""",
    },
    "positional_encoding": {
        "vectorised": """
import numpy as np
def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    i = np.arange(0, d, 2)
    angle = pos / 10000 ** (i / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
""",
        "loops": """
import math
import numpy as np
def positional_encoding(T, d):
    pe = np.zeros((T, d))
    for pos in range(T):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe
""",
        "exp_log": """
import numpy as np
def positional_encoding(T, d):
    position = np.arange(T, dtype=np.float64)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-np.log(10000.0) / d))
    pe = np.empty((T, d))
    pe[:, 0::2] = np.sin(position * div)
    pe[:, 1::2] = np.cos(position * div)
    return pe
""",
        "stack": """
import numpy as np
def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    freq = 1.0 / np.power(10000, 2 * np.arange(d // 2) / d)
    angles = pos * freq
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d)
""",
    },
    "additive_attention": {
        "vectorised": """
import numpy as np
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(query @ W_q + keys @ W_k) @ v
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ keys, weights
""",
        "loops": """
import math
import numpy as np
def additive_attention(query, keys, W_q, W_k, v):
    q = query @ W_q
    scores = []
    for key in keys:
        scores.append(float(v @ np.tanh(q + key @ W_k)))
    m = max(scores)
    e = [math.exp(s - m) for s in scores]
    total = sum(e)
    weights = np.array([x / total for x in e])
    return weights @ keys, weights
""",
        "helpers_float32": """
import numpy as np

def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)

def additive_attention(query, keys, W_q, W_k, v):
    query, keys, W_q, W_k, v = (a.astype(np.float32) for a in (query, keys, W_q, W_k, v))
    hidden = np.tanh(query[None, :] @ W_q + keys @ W_k)
    weights = softmax(hidden @ v)
    context = (weights[:, None] * keys).sum(axis=0)
    return context, weights
""",
    },
}

# ---- mutation operators ----------------------------------------------------------------------


@dataclass(frozen=True)
class Operator:
    name: str
    expect: str | None  # the id it should get, "pass" (same numbers), or None (no id)
    sites: Callable[[ast.AST], list[ast.AST]]  # the nodes it can change
    change: Callable[[ast.AST], ast.AST | None]  # the changed node (a copy), None: leave it
    only: tuple[str, ...] = ()  # the exercises it applies to (default: all)
    together: bool = False  # change every site at once (Q, K and V split the same way)


def _name(node: ast.AST) -> str:
    """``np.sum`` -> "sum", ``x.max`` -> "max", ``tanh`` -> "tanh"."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _calls(*names: str) -> Callable[[ast.AST], list[ast.AST]]:
    return lambda tree: [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) in names
    ]


def _kw(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _axis_value(call: ast.Call) -> ast.AST | None:
    k = _kw(call, "axis")
    if k is not None:
        return k.value
    positional = (
        call.args[1:]
        if _name(call.func)
        and isinstance(call.func, ast.Attribute)
        and (_name(call.func.value) == "np")
        else call.args
    )
    return positional[0] if positional else None


def _const(v) -> ast.expr:
    return ast.UnaryOp(ast.USub(), ast.Constant(-v)) if v < 0 else ast.Constant(v)


def _int_of(node: ast.AST | None) -> int | None:
    try:
        v = ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None
    return v if isinstance(v, int) else None


def _set_axis(call: ast.Call, new: int) -> ast.Call | None:
    """The reduction with its axis (-1 or 1, the rows) moved to the columns (0)."""
    c = copy.deepcopy(call)
    k = _kw(c, "axis")
    if k is not None and _int_of(k.value) in (-1, 1):
        k.value = _const(new)
        return c
    np_fn = isinstance(c.func, ast.Attribute) and _name(c.func.value) == "np"
    i = 1 if np_fn else 0
    if len(c.args) > i and _int_of(c.args[i]) in (-1, 1):
        c.args[i] = _const(new)
        return c
    return None


def _drop_kw(call: ast.Call, name: str) -> ast.Call | None:
    if _kw(call, name) is None:
        return None
    c = copy.deepcopy(call)
    c.keywords = [k for k in c.keywords if k.arg != name]
    return c


def _no_axis(call: ast.Call) -> ast.Call | None:
    """A row reduction made global: ``e.sum(axis=-1, keepdims=True)`` -> ``e.sum()``."""
    if _set_axis(call, 0) is None:
        return None
    c = copy.deepcopy(call)
    np_fn = isinstance(c.func, ast.Attribute) and _name(c.func.value) == "np"
    c.args = c.args[:1] if np_fn else []
    c.keywords = []
    return c


def _sqrt_divisions(tree: ast.AST) -> list[ast.AST]:
    """``x / sqrt(...)`` and ``x / d ** 0.5``: the scale."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
            and _is_sqrt(n.right)]  # fmt: skip


def _is_sqrt(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and _name(node.func) == "sqrt":
        return True
    if isinstance(node, ast.Call) and _name(node.func) == "float32" and node.args:
        return _is_sqrt(node.args[0])
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
            and isinstance(node.right, ast.Constant) and node.right.value == 0.5)  # fmt: skip


def _sqrt_arg(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Call) and _name(node.func) == "float32":
        return _sqrt_arg(node.args[0])
    return node.args[0] if isinstance(node, ast.Call) else node.left


def _scale_by_d(div: ast.BinOp) -> ast.AST:
    c = copy.deepcopy(div)
    c.right = _sqrt_arg(c.right)
    return c


def _scale_times(div: ast.BinOp) -> ast.AST:
    c = copy.deepcopy(div)
    c.op = ast.Mult()
    return c


def _tri_calls(tree: ast.AST) -> list[ast.AST]:
    return [n for n in _calls("tril", "triu")(tree)]


def _k_of(call: ast.Call) -> int:
    k = _kw(call, "k")
    if k is not None:
        return _int_of(k.value) or 0
    return _int_of(call.args[1]) if len(call.args) > 1 else 0


def _with_k(call: ast.Call, k: int, name: str | None = None) -> ast.Call:
    c = copy.deepcopy(call)
    c.args = c.args[:1]
    c.keywords = [kw for kw in c.keywords if kw.arg != "k"] + [ast.keyword("k", _const(k))]
    if name is not None:
        c.func.attr = name
    return c


def _flip_triangle(call: ast.Call) -> ast.Call:
    """tril(k) <-> triu(-k): the mask kept (or hidden) on the other side of the diagonal."""
    other = "triu" if _name(call.func) == "tril" else "tril"
    return _with_k(call, -_k_of(call), other)


def _hide_diagonal(call: ast.Call) -> ast.Call | None:
    """tril (allowed) loses the diagonal; triu (hidden) gains it."""
    k = _k_of(call)
    if _name(call.func) == "tril" and k == 0:
        return _with_k(call, -1)
    if _name(call.func) == "triu" and k == 1:
        return _with_k(call, 0)
    return None


def _one_future(call: ast.Call) -> ast.Call | None:
    k = _k_of(call)
    if _name(call.func) == "tril" and k == 0:
        return _with_k(call, 1)
    if _name(call.func) == "triu" and k == 1:
        return _with_k(call, 2)
    return None


def _compares(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Compare) and len(n.ops) == 1
            and isinstance(n.ops[0], (ast.GtE, ast.LtE, ast.Gt, ast.Lt))]  # fmt: skip


def _flip_compare(node: ast.Compare) -> ast.AST:
    c = copy.deepcopy(node)
    c.ops = [{ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt}[type(c.ops[0])]()]
    return c


def _strict_compare(node: ast.Compare) -> ast.AST:
    c = copy.deepcopy(node)
    c.ops = [{ast.GtE: ast.Gt, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.Lt: ast.LtE}[type(c.ops[0])]()]
    return c


def _neg_inf(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return text in ("-np.inf", "-math.inf", "-1000000000.0", "-1e9", "-float('inf')")


def _fills(tree: ast.AST) -> list[ast.AST]:
    """The value masked scores are set to (in np.where, an assignment or a conditional; not
    an additive mask, where 0 means no mask at all)."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _name(n.func) == "where":
            found += [a for a in n.args if isinstance(a, ast.UnaryOp) and _neg_inf(a)]
        elif isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript):
            found += [n.value] if _neg_inf(n.value) else []
        elif isinstance(n, ast.IfExp) and _neg_inf(n.orelse):
            found.append(n.orelse)
    return found


def _mask_ifs(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "mask"]


def _mask_list_comps(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.IfExp) and _neg_inf(n.orelse)]


DELETED = ast.Pass()  # a statement replaced by this one is taken out of its block


def _never(node: ast.If) -> ast.AST:
    """The whole ``if mask:`` block left out, as a learner who forgets the mask writes it."""
    return DELETED


def _max_subtractions(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
            and _name(getattr(n.right, "func", None)) == "max"]  # fmt: skip


def _transposed_products(tree: ast.AST) -> list[ast.AST]:
    """``Q @ K.T`` and friends: a product whose right side is transposed (the scores)."""

    def transposed(x):
        return (isinstance(x, ast.Attribute) and x.attr == "T") or (
            isinstance(x, ast.Call) and _name(x.func) == "transpose" and len(x.args) == 3
        )

    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) and transposed(n.right)
    ]
    found += [n for n in _calls("matmul")(tree) if len(n.args) == 2 and transposed(n.args[1])]
    return found  # fmt: skip


def _swap_product(node: ast.AST) -> ast.AST | None:
    c = copy.deepcopy(node)
    left, right = (c.left, c.right) if isinstance(c, ast.BinOp) else tuple(c.args)
    if isinstance(right, ast.Attribute):  # Q @ K.T -> K @ Q.T
        new_left, new_right = right.value, ast.Attribute(left, "T", ast.Load())
    else:  # Q @ K.transpose(0, 2, 1) -> K @ Q.transpose(0, 2, 1)
        new_left = right.func.value
        new_right = ast.Call(ast.Attribute(left, "transpose", ast.Load()), right.args, [])
    if isinstance(c, ast.BinOp):
        c.left, c.right = new_left, new_right
    else:
        c.args = [new_left, new_right]
    return c


def _einsum_scores(tree: ast.AST) -> list[ast.AST]:
    return [n for n in _calls("einsum")(tree) if isinstance(n.args[0], ast.Constant)
            and n.args[0].value in ("td,sd->ts", "tk,sk->ts", "thd,shd->hts")]  # fmt: skip


def _einsum_transposed(call: ast.Call) -> ast.Call:
    c = copy.deepcopy(call)
    spec = c.args[0].value
    left, out = spec.split("->")
    c.args[0] = ast.Constant(f"{left}->{out[:-2]}{out[-1]}{out[-2]}")
    return c


def _value_projections(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "W_V"
            and isinstance(n.ctx, ast.Load)]  # fmt: skip


def _to_wk(node: ast.Name) -> ast.AST:
    return ast.Name("W_K", ast.Load())


def _split_transposes(tree: ast.AST) -> list[ast.AST]:
    """``P.reshape(T, h, d).transpose(1, 0, 2)``: the head split."""
    return [n for n in _calls("transpose")(tree) if isinstance(n.func, ast.Attribute)
            and _name(getattr(n.func.value, "func", None)) == "reshape"
            and [_int_of(a) for a in n.args] == [1, 0, 2]]  # fmt: skip


def _split_without_transpose(call: ast.Call) -> ast.AST:
    reshape = copy.deepcopy(call.func.value)
    a, b, c = reshape.args
    reshape.args = [b, a, c]
    return reshape


def _merge_transposes(tree: ast.AST) -> list[ast.AST]:
    """``O.transpose(1, 0, 2).reshape(T, D)``: the head merge."""
    return [n for n in _calls("reshape")(tree) if isinstance(n.func, ast.Attribute)
            and _name(getattr(n.func.value, "func", None)) == "transpose"
            and [_int_of(a) for a in n.func.value.args] == [1, 0, 2]]  # fmt: skip


def _merge_without_transpose(call: ast.Call) -> ast.AST:
    c = copy.deepcopy(call)
    c.func.value = c.func.value.func.value
    return c


def _head_slices(tree: ast.AST) -> list[ast.AST]:
    """``Q[:, h * d_k:(h + 1) * d_k]``: a head's contiguous block."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Slice) and n.lower is not None
            and ast.unparse(n.lower) in ("h * d_k", "lo")]  # fmt: skip


def _strided(s: ast.Slice) -> ast.AST:
    return ast.Slice(ast.Name("h", ast.Load()), None, ast.Name("num_heads", ast.Load()))


def _output_projections(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
            and ast.unparse(n.right) == "W_O"]  # fmt: skip


def _left(node: ast.BinOp) -> ast.AST:
    return copy.deepcopy(node.left)


def _sin_cos(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("sin", "cos")]


def _swap_sin_cos(node: ast.Attribute) -> ast.AST:
    c = copy.deepcopy(node)
    c.attr = "cos" if c.attr == "sin" else "sin"
    return c


def _all_sin_cos(tree: ast.AST) -> list[ast.AST]:
    return [tree] if len(_sin_cos(tree)) == 2 else []


def _swap_all(tree: ast.AST) -> ast.AST:
    c = copy.deepcopy(tree)
    for n in _sin_cos(c):
        n.attr = "cos" if n.attr == "sin" else "sin"
    return c


def _bases(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and n.value in (10000, 10000.0)]  # fmt: skip


def _base_1000(node: ast.Constant) -> ast.AST:
    return ast.Constant(type(node.value)(1000))


def _exponent_2i(tree: ast.AST) -> list[ast.AST]:
    """``2 * i / d`` in an exponent (the pair index doubled)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
            and isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Mult)
            and _int_of(n.left.left) == 2 and ast.unparse(n.left.right) in ("i", "np.arange(d // 2)")]  # fmt: skip


def _halve(node: ast.BinOp) -> ast.AST:
    c = copy.deepcopy(node)
    c.left = c.left.right
    return c


def _arange_T(tree: ast.AST) -> list[ast.AST]:
    return [n for n in _calls("arange", "range")(tree) if n.args and ast.unparse(n.args[0]) == "T"
            and len(n.args) == 1]  # fmt: skip


def _from_one(call: ast.Call) -> ast.AST:
    c = copy.deepcopy(call)
    c.args = [ast.Constant(1), ast.BinOp(ast.Name("T", ast.Load()), ast.Add(), ast.Constant(1))]
    return c


def _tanhs(tree: ast.AST) -> list[ast.AST]:
    return _calls("tanh")(tree)


def _unwrap(call: ast.Call) -> ast.AST:
    return copy.deepcopy(call.args[0])


def _tanh_then_v(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
            and isinstance(n.left, ast.Call) and _name(n.left.func) == "tanh"]  # fmt: skip


def _tanh_outside(node: ast.BinOp) -> ast.AST:
    inner = ast.BinOp(copy.deepcopy(node.left.args[0]), ast.MatMult(), copy.deepcopy(node.right))
    return ast.Call(copy.deepcopy(node.left.func), [inner], [])


def _fill_neg1e9(node: ast.AST) -> ast.AST:
    return ast.UnaryOp(ast.USub(), ast.Constant(1e30))


def _fill_zero(node: ast.AST) -> ast.AST:
    return ast.Constant(0.0)


# ---- operators for the mistakes of issue 33 -------------------------------------------------

FLOAT_OUT = ("softmax_rows", "scaled_dot_product_attention", "self_attention",
             "multi_head_attention", "positional_encoding", "additive_attention")  # fmt: skip
SCALAR_ARGS = {"mask", "num_heads", "T", "d"}


def _exercise_fns(tree: ast.AST) -> list[ast.FunctionDef]:
    return [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in SOLUTIONS]


def _exercise_returns(tree: ast.AST) -> list[ast.AST]:
    return [r.value for f in _exercise_fns(tree) for r in _returns_of(f)]


def _each_returned(node: ast.AST, wrap: Callable[[ast.expr], ast.expr]) -> ast.AST:
    if isinstance(node, ast.Tuple):
        return ast.Tuple([wrap(copy.deepcopy(e)) for e in node.elts], ast.Load())
    return wrap(copy.deepcopy(node))


def _as_int(node: ast.AST) -> ast.AST:
    return _each_returned(node, lambda e: ast.parse(f"np.asarray({ast.unparse(e)}).astype(int)",
                                                    mode="eval").body)  # fmt: skip


def _noisy(node: ast.AST) -> ast.AST:
    def wrap(e):
        x = ast.unparse(e)
        noise = f"(1 + 1e-3 * np.random.standard_normal(np.shape({x})))"
        return ast.parse(f"np.asarray({x}) * {noise}", mode="eval").body

    return _each_returned(node, wrap)


def _half_inputs(fn: ast.FunctionDef) -> ast.AST | None:
    names = [a.arg for a in fn.args.args if a.arg not in SCALAR_ARGS]
    if not names:
        return None
    c = copy.deepcopy(fn)
    c.body[:0] = [ast.parse(f"{n} = np.asarray({n}, dtype=np.float16)").body[0] for n in names]
    return c


def _key_transposes(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "T"
            and isinstance(n.value, ast.Name) and n.value.id.lower().startswith("k")]  # fmt: skip


def _reshape_for_transpose(node: ast.Attribute) -> ast.AST:
    k = node.value.id
    return ast.parse(f"{k}.reshape({k}.shape[1], {k}.shape[0])", mode="eval").body


def _head_joins(tree: ast.AST) -> list[ast.AST]:
    return [n for n in _calls("concatenate", "hstack")(tree) if n.args
            and isinstance(n.args[0], (ast.Name, ast.List, ast.ListComp))]  # fmt: skip


def _reversed_join(call: ast.Call) -> ast.AST:
    c = copy.deepcopy(call)
    c.args[0] = ast.parse(f"list({ast.unparse(call.args[0])})[::-1]", mode="eval").body
    return c


OPERATORS = [
    Operator("sum over columns", "softmax_axis", _calls("sum"), lambda n: _set_axis(n, -2)),
    Operator("max and sum over columns", "softmax_axis", lambda t: [t],
             lambda t: _all_calls(t, ("max", "sum"), lambda n: _set_axis(n, -2))),
    Operator("sum without keepdims", "missing_keepdims", _calls("sum"), lambda n: _drop_kw(n, "keepdims")),
    Operator("sum over everything", "softmax_global_sum", _calls("sum"), _no_axis),
    Operator("max over everything", "unstable_softmax", _calls("max"), _no_axis),
    Operator("no max subtraction", "unstable_softmax", _max_subtractions, _left),
    Operator("no scale", "missing_scale", _sqrt_divisions, _left),
    Operator("scale by d, not sqrt(d)", "wrong_scale", _sqrt_divisions, _scale_by_d),
    Operator("scale multiplies", "wrong_scale", _sqrt_divisions, _scale_times),
    Operator("scale after softmax", "scale_after_softmax", lambda t: [t], lambda t: _scale_moved(t)),
    Operator("scores K Q^T", "transposed_weights", _transposed_products, _swap_product),
    Operator("einsum scores transposed", "transposed_weights", _einsum_scores, _einsum_transposed),
    Operator("mask triangle flipped", "mask_orientation", _tri_calls, _flip_triangle),
    Operator("mask comparison flipped", "mask_orientation", _compares, _flip_compare),
    Operator("mask hides the diagonal", "mask_diagonal_excluded", _tri_calls, _hide_diagonal),
    Operator("mask comparison strict", "mask_diagonal_excluded", _compares, _strict_compare),
    Operator("mask shows one future key", "mask_shows_next", _tri_calls, _one_future),
    Operator("mask not applied", "mask_ignored", _mask_ifs, _never),
    Operator("masked scores set to 0", "mask_fill_zero", _fills, _fill_zero),
    Operator("masked scores -1e30", "pass", _fills, _fill_neg1e9),
    Operator("mask after softmax", "mask_after_softmax", lambda t: [t], lambda t: _mask_moved(t)),
    Operator("V from W_K", "wrong_value_projection", _value_projections, _to_wk),
    Operator("heads split without transpose", "head_split_reshape", _split_transposes,
             _split_without_transpose, together=True),
    Operator("heads merged without transpose", "head_merge_reshape", _merge_transposes,
             _merge_without_transpose),
    Operator("strided heads", "heads_interleaved", _head_slices, _strided, together=True),
    Operator("no output projection", "missing_output_projection", _output_projections, _left),
    Operator("PE base 1000", "pe_wrong_base", _bases, _base_1000, only=("positional_encoding",)),
    Operator("PE exponent i, not 2i", "pe_exponent_i_not_2i", _exponent_2i, _halve, only=("positional_encoding",)),
    Operator("PE positions from 1", "pe_position_offset", _arange_T, _from_one, only=("positional_encoding",)),
    Operator("PE sin and cos swapped", "sin_cos_swapped", _all_sin_cos, _swap_all, only=("positional_encoding",)),
    Operator("PE one sin/cos changed", "pe_one_function", _sin_cos, _swap_sin_cos, only=("positional_encoding",)),
    Operator("no tanh", "missing_tanh", _tanhs, _unwrap),
    Operator("tanh after v", "tanh_misplaced", _tanh_then_v, _tanh_outside),
    Operator("answer cast to int", "wrong_dtype", _exercise_returns, _as_int, only=FLOAT_OUT, together=True),
    Operator("noise in the answer", "random_inside", _exercise_returns, _noisy, only=FLOAT_OUT, together=True),
    Operator("inputs cast to float16", "low_precision", _exercise_fns, _half_inputs,
             only=tuple(e for e in FLOAT_OUT if e != "positional_encoding")),
    Operator("keys reshaped, not transposed", "reshape_not_transpose", _key_transposes, _reshape_for_transpose),
    Operator("heads joined in reverse", "heads_out_of_order", _head_joins, _reversed_join,
             only=("multi_head_attention",)),
]  # fmt: skip


def _all_calls(tree, names, change) -> ast.AST | None:
    c = copy.deepcopy(tree)
    done = False
    for n in list(ast.walk(c)):
        for field, value in ast.iter_fields(n):
            if isinstance(value, ast.Call) and _name(value.func) in names:
                new = change(value)
                if new is not None:
                    setattr(n, field, new)
                    done = True
    return c if done else None


def _returns_of(fn: ast.FunctionDef) -> list[ast.Return]:
    """The function's own returns (not those of functions defined inside it)."""
    found, todo = [], list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return) and n.value is not None:
            found.append(n)
        elif not isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            todo += ast.iter_child_nodes(n)
    return found


def _scale_moved(tree: ast.Module) -> ast.AST | None:
    """The scale taken off the scores and put on the weights: in the function that divides,
    every returned array is divided by the same factor (weights and output alike)."""
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        divs = _sqrt_divisions(fn)
        if len(divs) != 1 or not _returns_of(fn) or "softmax" in fn.name:
            continue
        c = copy.deepcopy(tree)
        target = next(
            f for f in ast.walk(c) if isinstance(f, ast.FunctionDef) and f.name == fn.name
        )
        div = _sqrt_divisions(target)[0]
        factor = copy.deepcopy(div.right)
        _replace(target, div, div.left)
        for ret in _returns_of(target):
            parts = ret.value.elts if isinstance(ret.value, ast.Tuple) else None
            wrap = [ast.BinOp(p, ast.Div(), copy.deepcopy(factor)) for p in (parts or [ret.value])]
            ret.value = ast.Tuple(wrap, ast.Load()) if parts is not None else wrap[0]
        return c
    return None


def _mask_moved(tree: ast.Module) -> ast.AST | None:
    """The mask taken off the scores and applied to the returned weights (zeros, no
    renormalisation): only for single functions returning (output, weights) as names."""
    c = copy.deepcopy(tree)
    fns = [f for f in c.body if isinstance(f, ast.FunctionDef)]
    if len(fns) != 1:
        return None
    fn = fns[0]
    ifs = _mask_ifs(fn)
    rets = _returns_of(fn)
    if len(ifs) != 1 or len(rets) != 1:
        return None
    body = ifs[0].body
    last = body[-1]
    if not (
        isinstance(last, ast.Assign)
        and isinstance(last.value, ast.Call)
        and _name(last.value.func) == "where"
        and len(last.value.args) == 3
    ):
        return None  # fmt: skip
    cond, _keep, fill = last.value.args
    if not _neg_inf(fill):
        return None
    ret = rets[0].value
    if not (isinstance(ret, ast.Tuple) and isinstance(ret.elts[-1], ast.Name)):
        return None
    w = ret.elts[-1].id
    ifs[0].body = [*body[:-1], ast.Assign([ast.Name("_allowed", ast.Store())], cond)]
    fix = ast.parse(f"if mask:\n    {w} = np.where(_allowed, {w}, 0.0)").body[0]
    i = fn.body.index(rets[0])
    fn.body.insert(i, fix)
    # the output must use the masked weights: recompute it from them where it is w @ V
    first = ret.elts[0]
    if isinstance(first, ast.BinOp) and ast.unparse(first.left) == w:
        return c
    return None


def _replace(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for n in ast.walk(root):
        for field, value in ast.iter_fields(n):
            if value is old:
                setattr(n, field, new)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old and new is DELETED:
                        del value[i]
                        break
                    if v is old:
                        value[i] = new


@dataclass
class Mutant:
    exercise: str
    style: str
    operator: Operator
    site: int
    source: str


CORPUS = Path(__file__).resolve().parents[1] / "tests" / "grade" / "submissions"


def solutions() -> dict[str, dict[str, str]]:
    """The styles above, and the right answers of the grader's test corpus beside them."""
    found = {ex: dict(styles) for ex, styles in SOLUTIONS.items()}
    for path in sorted(CORPUS.glob("*__pass__*.py")) if CORPUS.is_dir() else []:
        exercise, _, style = path.stem.split("__")
        found.setdefault(exercise, {})[f"corpus_{style}"] = path.read_text(encoding="utf-8")
    return found


def mutants() -> Iterator[Mutant]:
    """Every operator at every site of every solution (a site whose change is no change, or
    that does not apply there, gives no mutant)."""
    for exercise, styles in solutions().items():
        for style, source in styles.items():
            tree = ast.parse(source)
            original = ast.unparse(tree)
            for op in OPERATORS:
                if op.only and exercise not in op.only:
                    continue
                if op.together:
                    new = _change_all(tree, op)
                    if new is not None:
                        yield Mutant(exercise, style, op, 0, ast.unparse(new))
                    continue
                seen = set()
                for k, site in enumerate(op.sites(tree)):
                    new = op.change(site)
                    if new is None:
                        continue
                    text = _mutated(tree, site, new)
                    if text == original or text in seen:
                        continue
                    seen.add(text)
                    yield Mutant(exercise, style, op, k, text)


def double_mutants(per_solution: int = 30, rng_seed: int = 0) -> Iterator[tuple[Mutant, Mutant]]:
    """Two mistakes at once: a mutant of one operator, mutated again by another operator with
    another id (the first site where it changes something). Up to ``per_solution`` pairs per
    right solution, drawn at random (``(first, second)``: the second's source has both)."""
    rng = random.Random(rng_seed)
    singles: dict[tuple[str, str], list[Mutant]] = defaultdict(list)
    for m in mutants():
        if m.operator.expect not in (None, "pass") and not m.operator.together:
            singles[m.exercise, m.style].append(m)
    by_name = {o.name: o for o in OPERATORS}
    for (exercise, style), found in singles.items():
        pairs = []
        for first in found:
            tree = ast.parse(first.source)
            for name in sorted({m.operator.name for m in found} - {first.operator.name}):
                op = by_name[name]
                if op.expect == first.operator.expect:
                    continue
                for site in op.sites(tree):
                    new = op.change(site)
                    if new is None:
                        continue
                    text = _mutated(tree, site, new)
                    pairs.append((first, Mutant(exercise, style, op, 0, text)))
                    break
        yield from rng.sample(pairs, min(per_solution, len(pairs)))


def _mutated(tree: ast.AST, site: ast.AST, new: ast.AST) -> str:
    """The source of ``tree`` with ``site`` replaced by ``new`` (``tree`` itself unchanged)."""
    if site is tree:
        return ast.unparse(ast.fix_missing_locations(new))
    mutated = copy.deepcopy(tree)
    target = list(ast.walk(mutated))[list(ast.walk(tree)).index(site)]
    _replace(mutated, target, new)
    for n in list(ast.walk(mutated)):  # `x = x` left by taking a step out: the step deleted
        if isinstance(n, ast.Assign) and _self_assignment(n):
            _replace(mutated, n, DELETED)
    return ast.unparse(ast.fix_missing_locations(mutated))


def _self_assignment(n: ast.Assign) -> bool:
    return len(n.targets) == 1 and ast.dump(n.targets[0]).replace("Store", "Load") == ast.dump(
        n.value
    )


def run_doubles(seeds: int = 2, per_solution: int = 30) -> Counter:
    """Grade two-mistake mutants: **both** named, **one** of them (and nothing else), **none**,
    or **wrong** (an id that is neither); mutants whose numbers stay right are skipped."""
    counts: Counter = Counter()
    for first, both in double_mutants(per_solution):
        want = {first.operator.expect, both.operator.expect}
        for seed in range(seeds):
            kind, ids, same = outcome(both, seed)
            specific = set(ids) - GENERIC
            if same or kind == "still_correct":
                counts["skipped"] += 1
            elif specific - want:
                counts["wrong"] += 1
                print(f"wrong: {both.exercise}/{both.style} {sorted(want)} named {ids}")
            else:
                counts[{2: "both", 1: "one"}.get(len(specific), "none")] += 1
    return counts


# ---- grading ---------------------------------------------------------------------------------


def _change_all(tree: ast.AST, op: Operator) -> ast.AST | None:
    c = copy.deepcopy(tree)
    sites = op.sites(c)
    for site in sites:
        new = op.change(site)
        if new is None:
            return None
        _replace(c, site, new)
    return ast.fix_missing_locations(c) if sites else None


def _load(source: str, exercise: str) -> Callable:
    ns: dict = {"__name__": "submission"}
    exec(compile(source, "<mutant>", "exec"), ns)
    return ns[exercise]


def mutated_lines(m: Mutant) -> set[int]:
    """The 1-based lines of the mutant that differ from its solution (as both unparse); for
    lines deleted, the line that now stands where they stood (the first one after the gap:
    where the values the deleted step should have changed are used unchanged, README)."""
    before = ast.unparse(ast.parse(solutions()[m.exercise][m.style])).splitlines()
    after = m.source.splitlines()
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag == "delete":
            changed.add(j1 + 1)
        elif tag != "equal":
            changed |= set(range(j1 + 1, j2 + 1))
    return changed


# ids with no line to show: randomness has no line of its own, a probe's base no version
NO_LINE = {"random_inside", "pe_wrong_base"}
LINES: dict[tuple[str, str, str, int], bool] = {}  # (exercise, style, operator, site) -> line right
LINE_MISSES: list[tuple[Mutant, list[int], set[int]]] = []  # (mutant, lines shown, lines mutated)


def outcome(m: Mutant, seed: int) -> tuple[str, list[str], bool]:
    """(right/unnamed/wrong/still_correct, the ids named, whether the numbers equal the right
    answer everywhere) for one mutant at one seed, judged by the grader's own code. For a
    mutant named right, whether the line the report shows is a mutated one goes to ``LINES``."""
    from attnlab.grade.grader import prepared, verdict
    from attnlab.grade.inprocess import run_in_process
    from attnlab.grade.lines import in_process

    prep = prepared(m.exercise, seed)
    try:
        fn = _load(m.source, m.exercise)
    except Exception:
        return "unnamed", ["crash"], False
    with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):  # its prints
        run = run_in_process(fn, [*prep.cases, *prep.twins])
        r = verdict(prep, run, [], "en", trace=lambda f: in_process(fn, f))
    same = _same_numbers(prep, run)
    expect = m.operator.expect
    if expect in r.mistakes and expect not in NO_LINE:
        key = (m.exercise, m.style, m.operator.name, m.site)
        shown, mutated = r.lines.get(expect, []), mutated_lines(m)
        LINES[key] = LINES.get(key, True) and bool(set(shown) & mutated)
        if not set(shown) & mutated:
            LINE_MISSES.append((m, shown, mutated))
    specific = [x for x in r.mistakes if x not in GENERIC]
    if m.operator.expect == "pass":
        return ("still_correct" if r.passed else "wrong"), r.mistakes, same
    if r.passed:
        return "still_correct", [], same
    if any(x != m.operator.expect for x in specific):
        return "wrong", r.mistakes, same
    return ("right" if m.operator.expect in specific else "unnamed"), r.mistakes, same


def _numbered(source: str) -> str:
    return "\n".join(f"{n:3} {text}" for n, text in enumerate(source.splitlines(), 1))


def _same_numbers(prep, run) -> bool:
    for cr, want in zip(run.cases, prep.expected, strict=False):
        if cr.error or len(cr.outputs) < len(want):
            return False
        for g, e in zip(cr.outputs, want, strict=False):
            if g is None or g.shape != e.shape:
                return False
            if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=1e-6, atol=1e-8,
                               equal_nan=True):  # fmt: skip
                return False
    return True


def run(
    seeds: int = 2, sample: int | None = None, rng_seed: int = 0, found: list | None = None
) -> dict:
    """Grade every mutant (or a sample of them) on ``seeds`` seeds; the counts and the misses
    (``found``: the mutants, if already made)."""
    found = list(mutants()) if found is None else list(found)
    if sample is not None and sample < len(found):
        found = random.Random(rng_seed).sample(found, sample)
    per_ex: dict[str, Counter] = defaultdict(Counter)
    per_op: dict[str, Counter] = defaultdict(Counter)
    misses: list[tuple] = []
    for m in found:
        for seed in range(seeds):
            kind, ids, same = outcome(m, seed)
            if same and kind not in ("still_correct",) and m.operator.expect != "pass":
                kind = "equivalent_failed"
            per_ex[m.exercise][kind] += 1
            per_op[m.operator.name][kind] += 1
            if kind in ("wrong", "unnamed", "equivalent_failed"):
                misses.append((kind, m, seed, ids))
    return {"mutants": len(found), "seeds": seeds, "per_exercise": per_ex,
            "per_operator": per_op, "misses": misses}  # fmt: skip


KINDS = ("right", "unnamed", "wrong", "still_correct", "equivalent_failed")


def table(
    counts: dict[str, Counter], title: str, expect: dict[str, str | None] | None = None
) -> str:
    head = f"| {title} | " + ("id | " if expect else "") + " | ".join(KINDS) + " | named right |"
    lines = [head, "|" + " --- |" * (len(KINDS) + 2 + bool(expect))]
    total = Counter()
    for name, c in sorted(counts.items()):
        total += c
        lines.append(_row(name, c, expect.get(name) if expect else None, bool(expect)))
    lines.append(_row("**all**", total, "", bool(expect)))
    return "\n".join(lines)


def _row(name: str, c: Counter, expect, show_id: bool) -> str:
    named = c["right"] + c["unnamed"] + c["wrong"]
    share = f"{c['right'] / named:.0%}" if named and expect != "pass" else "-"
    cells = [name] + ([f"`{expect}`" if expect else "-"] if show_id else [])
    return "| " + " | ".join(cells + [str(c[k]) for k in KINDS] + [share]) + " |"


def summary(result: dict) -> dict:
    ops = {o.name: o for o in OPERATORS}
    labelled = Counter()
    for name, c in result["per_operator"].items():
        if ops[name].expect not in (None, "pass"):
            labelled += c
    named = labelled["right"] + labelled["unnamed"] + labelled["wrong"]
    wrong = sum(c["wrong"] + c["equivalent_failed"] for c in result["per_operator"].values())
    return {"wrong": wrong, "right_share": labelled["right"] / named if named else 1.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2, help="seeds per mutant (default 2)")
    ap.add_argument("--sample", type=int, help="grade a random sample of N mutants (quick mode)")
    ap.add_argument("--misses", type=int, default=20, help="misses to list (default 20)")
    ap.add_argument("--line-misses", type=int, default=0, metavar="N",
                    help="list N mutants whose line shown is not the mutated one")  # fmt: skip
    ap.add_argument(
        "--doubles", type=int, metavar="N", help="instead: N two-mistake mutants per solution"
    )
    args = ap.parse_args(argv)
    start = time.perf_counter()
    if args.doubles:
        c = run_doubles(args.seeds, args.doubles)
        graded = c["both"] + c["one"] + c["none"] + c["wrong"]
        print(f"two-mistake mutants, {graded} graded in {time.perf_counter() - start:.0f} s: "
              + ", ".join(f"{k} {c[k]}" for k in ("both", "one", "none", "wrong", "skipped")))  # fmt: skip
        return 0 if c["wrong"] == 0 else 1
    result = run(args.seeds, args.sample)
    took = time.perf_counter() - start
    ops = {o.name: o.expect for o in OPERATORS}
    print(f"{result['mutants']} mutants x {result['seeds']} seeds in {took:.0f} s\n")
    print(table(result["per_exercise"], "exercise") + "\n")
    print(table(result["per_operator"], "operator", ops) + "\n")
    s = summary(result)
    print(f"named wrong: {s['wrong']}; named right (operators with an id): {s['right_share']:.1%}")
    print(f"line shown is the mutated one: {sum(LINES.values())}/{len(LINES)} named mutants "
          f"({sum(LINES.values()) / max(1, len(LINES)):.1%})")  # fmt: skip
    missed: dict[tuple, bool] = {}  # a mutant missed on some seed -> another line shown on one
    for m, shown, _ in LINE_MISSES:
        key = (m.exercise, m.style, m.operator.name, m.site)
        missed[key] = missed.get(key, False) or bool(shown)
    other = sum(missed.values())
    print(f"  not the mutated one: {other} mutants show another line, {len(missed) - other} none")
    by_op = defaultdict(list)
    for (_, _, op, _), hit in LINES.items():
        by_op[op].append(hit)
    print(
        "  per operator: " + ", ".join(f"{op} {sum(h)}/{len(h)}" for op, h in sorted(by_op.items()))
    )
    for m, shown, mutated in LINE_MISSES[: args.line_misses]:
        print(f"\nline shown {shown}, mutated {sorted(mutated)}: {m.exercise}/{m.style} "
              f"'{m.operator.name}' site {m.site}\n{_numbered(m.source)}")  # fmt: skip
    for kind, m, seed, ids in result["misses"][: args.misses]:
        print(f"\n{kind}: {m.exercise}/{m.style} '{m.operator.name}' site {m.site} seed {seed}: "
              f"{ids}\n{m.source}")  # fmt: skip
    return 0 if s["wrong"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
