"""The exercise catalogue: contracts, test cases, references and the mistakes each can show.

References run in float64 through ``attnlab.ref`` (held to PyTorch's float64 to 1e-10 by the
tests), so grading never imports torch. Cases mix fixed and fresh
random inputs: masked and unmasked, d_model != d_k, T = 1, T != S where the contract allows it,
large magnitudes (which break a softmax without max subtraction), float32 and float64.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import ref
from ..i18n import Text
from . import variants as wrong
from .mistakes import MISTAKES, hint, versions

NUMPY_ONLY = ("numpy",)
Outputs = tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Case:
    name: str
    arrays: dict[str, np.ndarray]
    scalars: tuple = ()
    kwargs: dict = field(default_factory=dict)
    large: bool = False  # large-magnitude inputs: a softmax without max subtraction overflows
    points: float = 1.0  # what passing this case's check is worth (a teacher's exercise sets it)

    @cached_property  # asked for each version compared: thousands of times a grading
    def float32(self) -> bool:
        return any(a.dtype == np.float32 for a in self.arrays.values())


@dataclass(frozen=True)
class Exercise:
    name: str
    signature: str
    returns: tuple[str, ...]  # names of the returned arrays, in order
    summary: Text
    doc: str  # the contract, for the starter file
    make_cases: Callable[[np.random.Generator], list[Case]]
    reference: Callable[..., Outputs]  # float64 inputs -> float64 outputs
    # a wrong version: (args..., **case keywords, **changes) -> outputs; the changes are the
    # versions of the mistakes of ``families`` in the table of ``mistakes``
    variant: Callable[..., Outputs] | None = None
    allowed_imports: tuple[str, ...] | None = NUMPY_ONLY
    lesson: int | None = None
    # the right answer computed plainly in the inputs' precision: float32 answers may err at most
    # twice as much as this does (attnlab.parity); None = a fixed 64-ulp bound
    naive: Callable[..., Outputs] | None = None
    # candidates built from the learner's own answer (args..., got) -> {id: [outputs]}: a
    # hypothesis read off the answer, kept only if rebuilding from it reproduces the answer
    probes: Callable[..., dict[str, list[Outputs | None]]] | None = None
    families: tuple[str, ...] = ()

    def hint(self, mistake: str, lang: str = "en", level: int = 3) -> str:
        """The hint for ``mistake`` (the table's, ``mistakes.hint``)."""
        return hint(mistake, lang, level)

    def check_points(self, name: str) -> float:
        """What a whole-run check (``"inputs left unchanged"``) is worth: 1, like each case."""
        return 1.0

    def version_table(self, mask: bool = True) -> dict[str, list[dict]]:
        """{id: [changes, ...]} of the mistakes with versions in this exercise's families (an
        id in two of them has the versions of both, in order); mask mistakes need a mask."""
        table: dict[str, list[dict]] = {}
        for family in self.families:
            for mid, changes in versions(family).items():
                if mask or MISTAKES[mid].step != "mask":
                    table.setdefault(mid, []).extend(changes)
        return table

    def changes(self, mid: MistakeId, k: int, mask: bool = True) -> dict:
        """The keyword changes of version ``k`` of ``mid`` (of a pair: both mistakes' changes,
        in ``_candidates``' order)."""
        table = self.version_table(mask)
        if isinstance(mid, str):
            return table[mid][k]
        a, b = mid
        both = [{**ca, **cb} for ca in table[a] for cb in table[b] if not ca.keys() & cb.keys()]
        return both[k]

    def mistakes(self, *args, pairs: Pairs = False, **kwargs) -> dict[MistakeId, list]:
        """{id: [outputs of each version]} on these inputs, None where a version cannot run on
        these shapes; with ``pairs``, two mistakes made at once (``_candidates``)."""
        if self.variant is None:
            return {}

        def run(**changes):
            return self.variant(*args, **kwargs, **changes)

        return _candidates(run, self.version_table(kwargs.get("mask", True)), pairs)


def twins(cases: list[Case], seed: int) -> list[tuple[int, Case]]:
    """For each case with array inputs, a twin: the same shapes, dtypes and keywords, other
    numbers (a function that computes gives other answers; one that looks them up, the same)."""
    rng = np.random.default_rng([seed, 7919])
    found = []
    for i, c in enumerate(cases):
        if not c.arrays:
            continue
        arrays = {
            n: (a + rng.standard_normal(a.shape) * max(1.0, float(np.std(a)))).astype(a.dtype)
            for n, a in c.arrays.items()
        }
        found.append((i, Case(c.name + " (twin)", arrays, c.scalars, dict(c.kwargs), c.large)))
    return found


def repeats(cases: list[Case], n: int = 2) -> list[tuple[int, Case]]:
    """The ``n`` largest cases again, unchanged: a function that computes gives the same
    answer twice; one with randomness inside (dropout) does not (the largest, so that a
    random mask over their cells is very unlikely to come out the same twice)."""

    def size(c: Case) -> int:
        return sum(a.size for a in c.arrays.values()) + sum(int(v) for v in c.scalars)

    found = sorted(enumerate(cases), key=lambda ic: -size(ic[1]))[:n]
    return [
        (i, Case(c.name + " (again)", {k: a.copy() for k, a in c.arrays.items()}, c.scalars,
                 dict(c.kwargs), c.large))
        for i, c in found
    ]  # fmt: skip


# ---- references ------------------------------------------------------------------------------


def _reference_attention(Q, K, V, mask: bool) -> Outputs:
    """(output, weights) from ``attnlab.ref`` in float64 (itself held to PyTorch's float64 to
    1e-10 by tests/ref and tests/grade: the grader needs no torch to know the answers)."""
    q, k, v = (np.asarray(a, np.float64) for a in (Q, K, V))
    return ref.scaled_dot_product_attention(q, k, v, is_causal=bool(mask), return_weights=True)


def _fixed() -> np.random.Generator:
    """The generator of the fixed hard cases: the same inputs in every run, whatever the seed,
    so a verdict never depends on which random cases a run happened to draw."""
    return np.random.default_rng(20241130)


MistakeId = str | tuple[str, str]  # one mistake's id, or two made at once: (a, b)
# which versions to build: False, one mistake at a time; True, every pair of two mistakes made
# at once; a frozenset, only those pairs
Pairs = bool | frozenset[tuple[str, str]]


def _candidates(fn: Callable, table: dict[str, list[dict]], pairs: Pairs) -> dict[MistakeId, list]:
    """{id: [outputs of each version]}: ``fn(**changes)`` runs one version (None where it
    cannot run on these shapes). With ``pairs``, the versions of two mistakes made at once,
    across families too, keyed (a, b): each version of a with each of b that changes other
    keywords."""
    if pairs:
        return {
            (a, b): [
                wrong.safe(fn, **ca, **cb)
                for ca in table[a]
                for cb in table[b]
                if not ca.keys() & cb.keys()
            ]
            for a, b in itertools.combinations(table, 2)
            if pairs is True or (a, b) in pairs
        }
    return {mid: [wrong.safe(fn, **c) for c in changes] for mid, changes in table.items()}


# ---- softmax_rows ---------------------------------------------------------------------------


def _softmax_cases(rng: np.random.Generator) -> list[Case]:
    extreme = np.array([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -999.0], [0.5, 0.5, 0.5]])
    return [
        Case("fixed 2x3", {"x": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])}),
        Case("fixed ties 3x3 (equal scores)", {"x": np.full((3, 3), 2.0)}),
        Case("fixed rows at +1000, -1000 and 0.5", {"x": extreme}, large=True),
        Case("random 4x7", {"x": rng.standard_normal((4, 7))}),
        Case("random 5x5 float32", {"x": rng.standard_normal((5, 5)).astype(np.float32)}),
        Case("one row 1x6", {"x": rng.standard_normal((1, 6))}),
        Case("one column 4x1", {"x": rng.standard_normal((4, 1))}),
        Case("large scores 3x4 (x1000)", {"x": rng.standard_normal((3, 4)) * 1000}, large=True),
    ]


# ---- causal_mask ------------------------------------------------------------------------------


def _mask_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(f"T={T}", {}, scalars=(T,)) for T in (1, 3, 5, int(rng.integers(6, 12)))]


# ---- scaled_dot_product_attention ------------------------------------------------------------


def _qkv(rng, T, S, d, dv, dtype=np.float64, mag=1.0):
    return {
        "Q": (rng.standard_normal((T, d)) * mag).astype(dtype),
        "K": (rng.standard_normal((S, d)) * mag).astype(dtype),
        "V": rng.standard_normal((S, dv)).astype(dtype),
    }


# The contract's dimensions: each attention exercise is tried on every combination of mask or
# not, the shapes its contract allows (T = S, T < S, T > S, one query), float64 and float32, and
# large magnitudes (masked and not), plus the fixed hard cases of _fixed_attention_cases.
DTYPES = (np.float64, np.float32)


def _grid(
    rng, inputs, shapes: dict[str, tuple], large: tuple[str, ...], scalars=lambda shape: ()
) -> list[Case]:
    """Cases for each mask x shape x dtype, then large magnitudes for the ``large`` shapes:
    ``inputs(rng, *shape, dtype, magnitude)`` makes one case's arrays, ``scalars(shape)`` its
    positional numbers (the number of heads)."""
    cases = []
    for mask in (False, True):
        tag = "masked" if mask else "unmasked"
        for label, shape in shapes.items():
            for dtype in DTYPES:
                bits = "" if dtype == np.float64 else " float32"
                arrays = inputs(rng, *shape, dtype, 1.0)
                cases.append(Case(f"{label}{bits} {tag}", arrays, scalars(shape), {"mask": mask}))
        for label in large:
            arrays = inputs(rng, *shapes[label], np.float64, 30.0)
            name = f"large magnitude {label} {tag}"
            cases.append(Case(name, arrays, scalars(shapes[label]), {"mask": mask}, large=True))
    return cases


SDPA_SHAPES = {  # (T, S, d, d_v): T = S, fewer queries than keys, more, one query
    "T=5 S=5 d=8": (5, 5, 8, 4),
    "T=3 S=6 d=4": (3, 6, 4, 5),
    "T=6 S=3 d=4": (6, 3, 4, 2),
    "T=1 S=1 d=4": (1, 1, 4, 2),
    "T=1 S=4 d=3": (1, 4, 3, 3),
}


def _sdpa_cases(rng: np.random.Generator) -> list[Case]:
    def inputs(g, T, S, d, dv, dtype, mag):
        return _qkv(g, T, S, d, dv, dtype, mag)

    cases = _grid(rng, inputs, SDPA_SHAPES, large=("T=5 S=5 d=8", "T=3 S=6 d=4"))
    return cases + _fixed_attention_cases(lambda g, T, S, mag: _qkv(g, T, S, 8, 3, mag=mag))


def _fixed_attention_cases(inputs) -> list[Case]:
    """The same hard cases in every run: large magnitudes (masked and not), ties, one key."""
    g = _fixed()
    big = inputs(g, 5, 5, 40.0)
    tie = inputs(g, 3, 3, 1.0)
    tie = {n: (np.ones_like(a) if n in ("Q", "K", "X") else a) for n, a in tie.items()}
    return [
        Case("fixed large magnitude T=5 masked", big, kwargs={"mask": True}, large=True),
        Case("fixed large magnitude T=5 unmasked", big, kwargs={"mask": False}, large=True),
        Case("fixed ties (all scores equal) masked", tie, kwargs={"mask": True}),
        Case("fixed one key and query", inputs(g, 1, 1, 1.0), kwargs={"mask": True}),
    ]


def _sdpa_ref(Q, K, V, mask=False) -> Outputs:
    return (_reference_attention(Q, K, V, mask)[0],)


# ---- self_attention (the course's mini project) ----------------------------------------------


def _self_attn_inputs(rng, T, d_model, d_k, dtype=np.float64, mag=1.0):
    return {
        "X": (rng.standard_normal((T, d_model)) * mag).astype(dtype),
        "W_Q": rng.standard_normal((d_model, d_k)).astype(dtype),
        "W_K": rng.standard_normal((d_model, d_k)).astype(dtype),
        "W_V": rng.standard_normal((d_model, d_k)).astype(dtype),
    }


SELF_SHAPES = {  # (T, d_model, d_k): self-attention has S = T
    "T=5 d_model=6 d_k=3": (5, 6, 3),
    "T=4 d_model=4 d_k=4": (4, 4, 4),
    "T=1 d_model=3 d_k=2": (1, 3, 2),
}


def _self_attn_cases(rng: np.random.Generator) -> list[Case]:
    course = {
        "X": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        "W_Q": np.array([[1.0, 0.0], [2.0, 2.0]]),
        "W_K": np.eye(2),
        "W_V": np.array([[0.5, 1.0], [1.5, -1.0]]),
    }
    cases = [
        Case(f"course example 3x2 {'masked' if m else 'unmasked'}", course, kwargs={"mask": m})
        for m in (False, True)
    ]

    def inputs(g, T, d_model, d_k, dtype, mag):
        return _self_attn_inputs(g, T, d_model, d_k, dtype, mag)

    cases += _grid(rng, inputs, SELF_SHAPES, large=("T=4 d_model=4 d_k=4",))

    def fixed_inputs(g, T, S, mag):
        return _self_attn_inputs(g, T, 4, 4, mag=mag)

    return cases + _fixed_attention_cases(fixed_inputs)


def _self_attn_ref(X, W_Q, W_K, W_V, mask=False) -> Outputs:
    return _reference_attention(X @ W_Q, X @ W_K, X @ W_V, mask)


# ---- multi_head_attention --------------------------------------------------------------------


MHA_SHAPES = {  # (T, d_model, h)
    "T=5 d_model=8 h=2": (5, 8, 2),
    "T=4 d_model=12 h=3": (4, 12, 3),
    "T=1 d_model=4 h=4": (1, 4, 4),
}


def _mha_cases(rng: np.random.Generator) -> list[Case]:
    def inputs(g, T, d_model, h, dtype, mag):
        a = {"X": (g.standard_normal((T, d_model)) * mag).astype(dtype)}
        for n in ("W_Q", "W_K", "W_V", "W_O"):
            a[n] = (g.standard_normal((d_model, d_model)) / math.sqrt(d_model)).astype(dtype)
        return a

    return _grid(
        rng, inputs, MHA_SHAPES, large=("T=5 d_model=8 h=2",), scalars=lambda shape: (shape[2],)
    )


def _mha_ref(X, W_Q, W_K, W_V, W_O, num_heads, mask=False) -> Outputs:
    x = np.asarray(X, np.float64)
    out, _ = ref.multi_head_attention(x, x, x, W_Q, W_K, W_V, W_O, num_heads, is_causal=bool(mask))
    return (out,)


# ---- positional_encoding ---------------------------------------------------------------------


def _pe_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case(f"T={T} d={d}", {}, scalars=(T, d))
        for T, d in ((4, 6), (50, 16), (1, 2), (int(rng.integers(5, 30)), 8))
    ]


def _pe_probes(T, d, got: list[np.ndarray]) -> dict[str, list[Outputs | None]]:
    """A base other than 10000, read off the learner's own table and checked by rebuilding it."""
    base = wrong.estimated_pe_base(got[0]) if got and got[0] is not None else None
    if base is None or not 1.0 < base < 1e12 or abs(base / 10000.0 - 1) < 1e-3:
        return {}
    return {"pe_wrong_base": [wrong.safe(lambda: (wrong.positional(T, d, base=base),))]}


# ---- additive_attention ----------------------------------------------------------------------


def _additive_cases(rng: np.random.Generator) -> list[Case]:
    def inputs(S, d_q, d_k, d_a, dtype=np.float64, mag=1.0):
        return {
            "query": rng.standard_normal(d_q).astype(dtype),
            "keys": rng.standard_normal((S, d_k)).astype(dtype),
            "W_q": rng.standard_normal((d_q, d_a)).astype(dtype),
            "W_k": rng.standard_normal((d_k, d_a)).astype(dtype),
            "v": (rng.standard_normal(d_a) * mag).astype(dtype),
        }

    # fixed: v large and aligned with tanh's sign, so some score is near +800 in every run
    g = _fixed()
    fixed = {
        "query": np.ones(3),
        "keys": g.standard_normal((6, 3)),
        "W_q": np.full((3, 4), 2.0),
        "W_k": g.standard_normal((3, 4)) * 0.1,
        "v": np.full(4, 200.0),
    }
    return [
        Case("S=5 d_q=3 d_k=4 d_a=6", inputs(5, 3, 4, 6)),
        Case("S=1", inputs(1, 2, 2, 3)),
        Case("S=7 float32", inputs(7, 4, 4, 5, np.float32)),
        Case("large magnitude v (x800)", inputs(6, 3, 3, 4, mag=800.0), large=True),
        Case("fixed scores near +800", fixed, large=True),
    ]


def _additive_ref(query, keys, W_q, W_k, v) -> Outputs:
    w = ref.softmax(ref.score(query, keys, "additive", W_q=W_q, W_k=W_k, v=v))  # (S,)
    return w @ keys, w


def _naive_mha(X, W_Q, W_K, W_V, W_O, num_heads, mask=False) -> Outputs:
    Q, K, Vv = (ref.split_heads(X @ W, num_heads) for W in (W_Q, W_K, W_V))
    heads = [wrong.attention(Q[h], K[h], Vv[h], mask)[0] for h in range(num_heads)]
    return (np.concatenate(heads, axis=-1) @ W_O,)


def _naive_additive(query, keys, W_q, W_k, v) -> Outputs:
    w = wrong.softmax(np.tanh(query @ W_q + keys @ W_k) @ v)
    return w @ keys, w


EXERCISES: dict[str, Exercise] = {
    e.name: e
    for e in [
        Exercise(
            "softmax_rows",
            "softmax_rows(x)",
            ("weights",),
            Text(
                "row-wise softmax of a 2-D array",
                "2 次元配列の行ごとのソフトマックス",
                "二维数组的逐行 softmax",
            ),
            "x: (T, S) scores. Return (T, S) weights: softmax along each row, every row summing to 1.\n"
            "Subtract each row's maximum before exp so that large scores do not overflow.",
            _softmax_cases,
            lambda x: (ref.softmax(np.asarray(x, np.float64)),),
            lambda x, **c: (wrong.softmax(x, **c),),
            naive=lambda x: (wrong.softmax(x),),
            families=("softmax",),
        ),
        Exercise(
            "causal_mask",
            "causal_mask(T)",
            ("mask",),
            Text("the lower-triangular causal mask", "下三角の因果マスク", "下三角因果掩码"),
            "T: sequence length. Return a (T, T) bool array, True where query t may attend to key s\n"
            "(s <= t): the lower triangle with the diagonal, like np.tril.",
            _mask_cases,
            lambda T: (np.tril(np.ones((T, T), dtype=bool)),),
            lambda T, **c: (wrong.causal(T, **c),),
            families=("mask",),
        ),
        Exercise(
            "scaled_dot_product_attention",
            "scaled_dot_product_attention(Q, K, V, mask=False)",
            ("output",),
            Text(
                "softmax(Q K^T / sqrt(d)) V, optionally causal",
                "softmax(Q Kᵀ / √d) V（因果マスクの有無を選べる）",
                "softmax(Q Kᵀ / √d) V（可选因果掩码）",
            ),
            "Q: (T, d) queries, K: (S, d) keys, V: (S, d_v) values. mask=True applies the causal mask\n"
            "(query t sees keys 0..t). Return the (T, d_v) output: softmax(Q K^T / sqrt(d)) V.",
            _sdpa_cases,
            _sdpa_ref,
            lambda Q, K, V, mask=False, **c: wrong.attention(Q, K, V, mask, **c)[:1],
            lesson=1,
            naive=lambda Q, K, V, mask=False: (wrong.attention(Q, K, V, mask)[0],),
            families=("attention",),
        ),
        Exercise(
            "self_attention",
            "self_attention(X, W_Q, W_K, W_V, mask=False)",
            ("output", "weights"),
            Text(
                "the course's mini project: masked self-attention in NumPy",
                "コースのミニプロジェクト：NumPy でマスク付き自己アテンション",
                "课程的小项目：用 NumPy 实现带掩码的自注意力",
            ),
            "X: (T, d_model) inputs; W_Q, W_K, W_V: (d_model, d_k). Q = X W_Q, K = X W_K, V = X W_V;\n"
            "scores Q K^T / sqrt(d_k) (T x T); with mask=True set scores above the diagonal to -inf\n"
            "(np.tril); softmax each row. Return (output (T, d_k), weights (T, T)).",
            _self_attn_cases,
            _self_attn_ref,
            wrong.self_attention,
            lesson=2,
            naive=lambda X, W_Q, W_K, W_V, mask=False: wrong.attention(
                X @ W_Q, X @ W_K, X @ W_V, mask
            ),
            families=("attention", "projections"),
        ),
        Exercise(
            "multi_head_attention",
            "multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False)",
            ("output",),
            Text(
                "split one projection into heads, attend, concatenate, mix",
                "一つの射影をヘッドに分け、アテンションを計算し、連結して混ぜる",
                "把一个投影拆成多个头，做注意力，拼接，再混合",
            ),
            "X: (T, d_model); W_Q, W_K, W_V, W_O: (d_model, d_model); num_heads divides d_model.\n"
            "Project, split the last axis into num_heads heads of width d_k = d_model // num_heads,\n"
            "run scaled dot-product attention per head (scale 1/sqrt(d_k), causal if mask), concatenate\n"
            "the heads in order and multiply by W_O. Return the (T, d_model) output.",
            _mha_cases,
            _mha_ref,
            lambda *a, mask=False, **c: (wrong.multi_head(*a, mask, **c),),
            lesson=3,
            naive=_naive_mha,
            families=("attention", "heads"),
        ),
        Exercise(
            "positional_encoding",
            "positional_encoding(T, d)",
            ("pe",),
            Text(
                "the sinusoidal positional encoding", "正弦波の位置エンコーディング", "正弦位置编码"
            ),
            "Return the (T, d) sinusoidal encoding: PE[pos, 2i] = sin(pos / 10000^(2i/d)),\n"
            "PE[pos, 2i+1] = cos(pos / 10000^(2i/d)). d is even.",
            _pe_cases,
            lambda T, d: (ref.sinusoidal_positional_encoding(T, d),),
            lambda T, d, **c: (wrong.positional(T, d, **c),),
            lesson=3,
            probes=_pe_probes,
            families=("positions",),
        ),
        Exercise(
            "additive_attention",
            "additive_attention(query, keys, W_q, W_k, v)",
            ("context", "weights"),
            Text(
                "Bahdanau attention for one decoder state",
                "一つのデコーダ状態に対する Bahdanau アテンション",
                "对一个解码器状态的 Bahdanau 注意力",
            ),
            "query: (d_q,) decoder state; keys: (S, d_k) encoder states (also the values);\n"
            "W_q: (d_q, d_a), W_k: (d_k, d_a), v: (d_a,). Scores v . tanh(query W_q + keys W_k),\n"
            "weights = softmax(scores) (S,), context = weights @ keys (d_k,). Return (context, weights).",
            _additive_cases,
            _additive_ref,
            wrong.additive,
            lesson=4,
            naive=_naive_additive,
            families=("additive",),
        ),
    ]
}
