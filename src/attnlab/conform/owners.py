"""Each row owns its failures: a failing case is charged to the row whose feature causes it.

A case exercises more than its own row's feature (the float16 row's masked case needs bool masks;
the gradients row's causal case needs ``is_causal``). ``needs(case)`` names every row a case
exercises. Rows are summed up in the kit's order (each row's needs come before it); a failing case
that needs a row already failing on its own is not this row's failure: the row says "see causal"
(status ``see``) instead of failing too. A row with a failing case that needs no failing row
fails on its own, and its smallest such case is the one reported.
"""

from __future__ import annotations

from .calls import CaseResult
from .cases import OMIT, STANDARD, Case, Feature
from .report import FAIL, PASS, SEE, UNSUPPORTED, Failure, FeatureResult

FULL_MASK = ("B", "H", "T", "S")


def needs(c: Case) -> set[str]:
    """The rows (feature ids) whose feature this case exercises."""
    n = {"basic"}
    top_left = c.align == "top_left" and c.lengths != "cache"  # is_causal as torch means it
    flags = {
        "cross_length": c.T != c.S,
        "value_dim": c.dv != c.D,
        "default_scale": c.scale == OMIT,
        "scale": c.scale not in (OMIT, STANDARD),
        "bool_mask": c.mask == "bool",
        "float_mask": c.mask == "float",
        "mask_broadcast": bool(c.mask) and c.mask_shape != FULL_MASK,
        "fully_masked_rows": c.dead_rows,
        "causal": c.causal and top_left,
        "causal_cross_length": c.causal and c.T != c.S and top_left,
        "gqa": c.gqa,
        "single_query": c.T == 1,
        "large_scores": c.qk_std != 1.0 or c.negative_rows,
        c.dtype: c.dtype != "float32",
        "non_contiguous": c.layout != "contiguous",
        "batch_broadcast": c.kv_batch is not None,
        "gradients": c.grads,
        "deterministic": c.repeat,
        "bottom_right_causal": c.align == "bottom_right",
        "sliding_window": c.window is not None,
        "softcap": c.softcap is not None,
        "alibi": c.alibi,
        "kv_cache": c.lengths == "cache",
        "key_lengths": c.lengths == "key",
    }
    return n | {k for k, on in flags.items() if on}


def _ratio(r: CaseResult) -> float:
    p = r.parity
    return p.max_abs_err / p.tolerance if p.tolerance else float("inf")


def summarize(
    feature: Feature, results: list[CaseResult], failing_rows: set[str]
) -> tuple[FeatureResult, CaseResult | None]:
    """The row of ``feature`` from its case results, given the rows already failing on their
    own; also the case it fails on (None when it does not fail on its own)."""
    res = FeatureResult(feature.id, feature.title, PASS, cases=len(results))
    judged = [r for r in results if r.parity is not None]
    refused = [r for r in results if r.parity is None]
    if judged:
        worst = max(judged, key=_ratio)
        res.error, res.budget = worst.parity.max_abs_err, worst.parity.tolerance
    failing = [r for r in judged if not r.parity.ok]
    own = [r for r in failing if not (needs(r.case) - {feature.id}) & failing_rows]
    blamed = sorted({x for r in failing for x in needs(r.case) & failing_rows} - {feature.id})
    first = own[0] if own else None
    if first is not None:
        msg = first.parity.message or "differs from the reference"
        res.status, res.failure = FAIL, Failure(first.case.describe(), msg, first.where)
    elif failing:
        res.status, res.see = SEE, blamed
        res.note = (
            f"{len(failing)} of {len(results)} cases fail, each needing "
            f"{' or '.join(blamed)}, which fails on its own row"
        )
    elif refused:
        res.status = UNSUPPORTED
    if refused:
        res.refusal = refused[0].note
        said = (
            f"{len(refused)} of {len(results)} cases refused, e.g. {refused[0].case.describe()}: "
            f"{refused[0].note}"
        )
        res.note = f"{res.note}; {said}" if res.note else said
    return res, first
