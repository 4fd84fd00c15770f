"""The conformance kit judged by itself: correct implementations pass every feature they
support; each classic bug fails its own feature and passes every feature it does not touch."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from attnlab import ref
from attnlab.conform import FEATURE_IDS, OPT_IN_IDS, check_attention, load_target
from attnlab.nn import functional as AF

HERE = Path(__file__).parent
BROKEN = f"{HERE}/broken.py"


def _backend(backend):
    """torch's SDPA held to one backend; its own "No available kernel" RuntimeError for inputs
    it cannot take is a refusal (unsupported), with no wrapper translating it."""

    def sdpa(*args, **kwargs):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(*args, **kwargs)

    return sdpa


def _ring(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """Ring attention in one process: 3 ranks each hold a third of the queries and visit every
    third of the keys, merging partial results by log-sum-exp (``ref.merge_attention``)."""
    T, S, world = q.shape[-2], k.shape[-2], 3
    qb, kb = np.linspace(0, T, world + 1).astype(int), np.linspace(0, S, world + 1).astype(int)
    causal = ref.causal_mask(T, S)
    outs = []
    for i0, i1 in itertools.pairwise(qb):  # one rank's queries
        parts = []
        for j0, j1 in itertools.pairwise(kb):  # the key blocks passing by
            m = None
            if attn_mask is not None:
                m = attn_mask[..., j0:j1]
                m = m[..., i0:i1, :] if m.shape[-2] == T else m
            if is_causal:
                c = causal[i0:i1, j0:j1]
                m = c if m is None else (m & c if m.dtype == bool else np.where(c, m, -np.inf))
            parts.append(
                ref.tiled_attention(
                    q[..., i0:i1, :],
                    k[..., j0:j1, :],
                    v[..., j0:j1, :],
                    attn_mask=m,
                    scale=scale,
                    enable_gqa=enable_gqa,
                    return_lse=True,
                )
            )
        acc = np.promote_types(q.dtype, np.float32)  # ring kernels keep out, lse in fp32 at least
        wide = [(o.astype(acc), s.astype(acc)) for o, s in parts]
        outs.append(ref.merge_attention(wide)[0].astype(q.dtype))
    return np.concatenate(outs, axis=-2)


def _cpu_backends() -> dict:
    """Every SDPA backend that runs plain attention on this machine's CPU (math and flash on
    torch 2.13), each held to itself."""
    found = {}
    for name in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
        backend = getattr(SDPBackend, name, None)
        try:
            with sdpa_kernel([backend]):
                F.scaled_dot_product_attention(*torch.ones(3, 1, 1, 2, 8))
        except (RuntimeError, TypeError):
            continue
        found[f"torch_sdpa_{name.lower()}"] = _backend(backend)
    return found


TORCH_CORRECT = {
    "torch_sdpa": F.scaled_dot_product_attention,
    **_cpu_backends(),
    "attnlab_nn_fused": AF.scaled_dot_product_attention,
    "attnlab_nn_weights": lambda *a, **kw: AF.scaled_dot_product_attention(
        *a, return_weights=True, **kw
    )[0],
    "plain_torch": load_target(f"{BROKEN}:attention"),
}
NUMPY_CORRECT = {
    "ref_sdpa": ref.scaled_dot_product_attention,
    "ref_tiled": ref.tiled_attention,
    "ref_ring": _ring,
}
# what each may leave unsupported: torch's CPU flash kernel refuses Dv != D, a last dim with
# stride != 1 and k, v batches that broadcast (the dispatcher sends those to the math backend)
ALLOWED_UNSUPPORTED = {
    "torch_sdpa_flash_attention": {"value_dim", "non_contiguous", "batch_broadcast"}
}
NUMPY_UNSUPPORTED = {"bfloat16", "gradients"}  # NumPy has no bfloat16 and no autograd
# Real bugs the kit found, left to the owner of attnlab.ref.tiled to fix (then drop them here):
# - large_scores: a row whose scores all lie below about -88 (float32) gives NaN: the first
#   rebase multiplies the empty accumulator by exp(88+) = inf (0 * inf).
# (Also measured, not run here as it is slow: with tiles of 4 keys its float16 running sums miss
# the float16 budget by 1.5x to 2.1x at seeds 0-5; the default 32-key tiles stay at 0.25x.)
KNOWN_FAILURES: dict[str, set[str]] = {}  # none: ref.tiled once lost rows below -88


def test_every_cpu_backend_is_judged():
    assert {"torch_sdpa_math", "torch_sdpa_flash_attention"} <= set(TORCH_CORRECT)


@pytest.mark.parametrize("name", TORCH_CORRECT)
def test_correct_torch_implementations_pass(name):
    report = check_attention(TORCH_CORRECT[name], api="torch")
    assert report.passed, str(report)
    unsupported = {f.id for f in report.features if f.status == "unsupported"}
    assert unsupported == ALLOWED_UNSUPPORTED.get(name, set()), str(report)
    assert [f.id for f in report.features] == list(FEATURE_IDS)


@pytest.mark.parametrize("name", NUMPY_CORRECT)
def test_correct_numpy_implementations_pass(name):
    report = check_attention(NUMPY_CORRECT[name], api="numpy")
    assert {f.id for f in report.failed} == KNOWN_FAILURES.get(name, set()), str(report)
    assert {f.id for f in report.features if f.status == "unsupported"} == NUMPY_UNSUPPORTED


MASK_ROWS = {"fully_masked_rows", "single_query", "float64", "float32", "float16", "bfloat16"}
BR = "bottom_right_causal"
# broken.py function -> ({row it fails: the conventions its output is named as}, rows that 'see')
BUGS = {
    "bottom_right": ({"causal_cross_length": [BR]}, {"single_query", "gradients"}),
    "no_max_shift": ({"large_scores": []}, set()),
    "nan_dead_rows": ({"fully_masked_rows": []}, {"gradients"}),
    "gqa_tile": ({"gqa": ["gqa_tiled"]}, {"gradients"}),
    "default_scale": ({"default_scale": ["default_scale_1_over_d"]}, set()),
    "inverted_mask": ({"bool_mask": ["mask_inverted"]}, MASK_ROWS | {"gradients"}),
    "half_accumulation": ({"float16": [], "bfloat16": []}, {"gradients"}),
    "noisy": ({"deterministic": []}, set()),
    "drop_tail": ({"awkward_sizes": [], "single_query": []}, set()),  # S > 32, S % 32 != 0
    # T = 1 with is_causal dropped (HF's SDPA path): at T = 1 the same as bottom-right
    "causal_off_at_one": ({"single_query": [BR, "causal_ignored"]}, set()),
    "fill_1e9": (  # mean(V) on fully masked rows; -1e9 overflows float16
        {"fully_masked_rows": ["masked_rows_mean_v"], "float16": []},
        {"gradients"},
    ),
    "nan_dead_grads": ({"gradients": []}, set()),  # finite forward, NaN gradients
    "causal_ignored": (
        {"causal": ["causal_ignored"]},
        {"causal_cross_length", "single_query", "awkward_sizes", "gradients"},
    ),
    "float_mask_as_bool": (
        {"float_mask": ["float_mask_as_bool"]},
        MASK_ROWS | {"mask_broadcast", "gradients"},
    ),
    "bool_mask_added": ({"bool_mask": ["bool_mask_added"]}, MASK_ROWS | {"gradients"}),
    "scale_ignored": ({"scale": ["scale_ignored"]}, set()),
    "float32_internals": ({"float64": ["float32_internals"]}, set()),
    "dropout": ({"basic": ["dropout_active"]}, set(FEATURE_IDS) - {"basic"}),
}


@pytest.mark.parametrize("bug", BUGS)
def test_each_bug_fails_its_feature_only(bug):
    """A bug fails the rows of the features it breaks, naming the convention its output follows
    where there is one; rows whose failing cases all need one of those rows say 'see' it instead
    of failing too; every other row passes. torch's generator is seeded: the dropout bug draws
    from it, and in a small case it may drop nothing (seed 12 left default_scale's cases whole,
    so that row passed; the suite's order once did the same)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        report = check_attention(load_target(f"{BROKEN}:{bug}"))
    failed, seen = BUGS[bug]
    assert {f.id: f.failure.matches for f in report.failed} == failed, str(report)
    assert {f.id for f in report.features if f.status == "see"} == seen, str(report)
    assert not [f for f in report.features if f.status == "unsupported"]
    for f in report.failed:
        assert f.failure.case and f.failure.message
        assert bool(f.failure.matches) == ("looks like: " in str(report).split(f"FAIL {f.id}")[1])
    for f in report.features:
        if f.status == "see":
            assert f.see and set(f.see) <= set(failed) and f.failure is None
            assert f"see {', '.join(f.see)}" in str(report)


def test_failures_name_the_smallest_case_and_where_it_differs():
    fn = load_target(f"{BROKEN}:gqa_tile")
    row = check_attention(fn, features=["gqa"])["gqa"]
    # repeat (tile) instead of repeat_interleave: heads 1 and 2 of 4 read the wrong kv head,
    # heads 0 and 3 happen to be right; MQA (one kv head) is right either way
    assert row.failure.case.startswith("q (1, 4, 3, 8), k (1, 2, 5, 8)")
    assert "enable_gqa=True" in row.failure.case
    assert row.failure.where == "rows 0-2, heads 1-2 (6 of 12 rows)"
    fn = load_target(f"{BROKEN}:bottom_right")
    row = check_attention(fn, features=["causal_cross_length", "causal"])["causal_cross_length"]
    assert "q (1, 2, 3, 8), k (1, 2, 5, 8)" in row.failure.case
    assert "is_causal=True" in row.failure.case and "float32" in row.failure.case
    fn = load_target(f"{BROKEN}:nan_dead_rows")
    row = check_attention(fn, features=["fully_masked_rows"])["fully_masked_rows"]
    assert "NaN" in row.failure.message and "NaN in 3" in row.failure.where
    assert "some rows fully masked" in row.failure.case


def test_the_float16_budget_is_torch_error_doubled():
    """A correct half kernel (fp32 sums) passes with room; fp16 running sums miss by 3x (at
    seeds 0-5: 3.4x to 4.4x; torch's own SDPA stays below 0.1x)."""
    good = check_attention(F.scaled_dot_product_attention, features=["float16"])["float16"]
    bad = check_attention(load_target(f"{BROKEN}:half_accumulation"), features=["float16"])
    bad = bad["float16"]
    assert good.status == "pass" and good.error < good.budget / 4
    assert bad.status == "fail" and bad.error > 2 * bad.budget
    assert bad.budget == pytest.approx(good.budget)  # the budget does not depend on the answer


def test_refusals_are_unsupported_not_failures():
    def no_masks(q, k, v, attn_mask=None, **kw):
        if attn_mask is not None:
            raise NotImplementedError("masks are not supported")
        return F.scaled_dot_product_attention(q, k, v, **kw)

    report = check_attention(no_masks, features=["basic", "bool_mask", "mask_broadcast"])
    assert report.passed
    assert [f.status for f in report.features] == ["pass", "unsupported", "unsupported"]
    assert "masks are not supported" in report["bool_mask"].note

    def three_args(q, k, v):  # no keyword arguments at all: every case is refused
        return F.scaled_dot_product_attention(q, k, v)

    report = check_attention(three_args, features=["basic", "causal"])
    assert not report.passed and report.counts()["unsupported"] == 2
    assert report.summary().endswith(
        "(nothing was checked: is the signature torch's SDPA signature?)"
    )

    def crashes(q, k, v, **kw):
        raise RuntimeError("CUDA error: misaligned address")

    row = check_attention(crashes, features=["basic"])["basic"]
    assert row.status == "fail" and "RuntimeError: CUDA error" in row.failure.message


def test_a_backend_without_a_kernel_is_unsupported_and_the_signature_is_not_blamed():
    flash = _backend(SDPBackend.FLASH_ATTENTION)  # CPU flash: no kernel for Dv != D
    row = check_attention(flash, features=["value_dim"])["value_dim"]
    assert row.status == "unsupported" and "RuntimeError: No available kernel" in row.note
    efficient = _backend(SDPBackend.EFFICIENT_ATTENTION)  # no CPU kernel at all
    report = check_attention(efficient, features=["basic", "causal"])
    assert report.counts() == {"pass": 0, "fail": 0, "unsupported": 2}
    summary = report.summary()
    assert "signature" not in summary and "every case was refused, e.g. RuntimeError" in summary


def test_wrong_shape_dtype_and_type_fail_with_a_sentence():
    cases = {
        lambda q, k, v, **kw: F.scaled_dot_product_attention(q, k, v, **kw)[..., :-1]: "shape",
        lambda q, k, v, **kw: F.scaled_dot_product_attention(q, k, v, **kw).double(): "dtype",
        lambda q, k, v, **kw: F.scaled_dot_product_attention(q, k, v, **kw).tolist(): "list",
    }
    for fn, word in cases.items():
        report = check_attention(fn, features=["basic"])
        row = report["basic"]
        assert row.status == "fail" and word in row.failure.message, row
        # nothing was compared: no error or budget in the table (not "inf" against "0")
        assert re.search(r"\nbasic +fail +- +- +\d+ ", str(report)), str(report)

    def returns_none(q, k, v, **kw):
        return None

    for feature in ("basic", "gradients"):  # gradients too: what came, not "no gradient reached"
        row = check_attention(returns_none, features=[feature])[feature]
        assert row.status == "fail" and "returned NoneType, expected a torch.Tensor" in (
            row.failure.message
        ), row
    report = check_attention(returns_none, features=["basic", "gradients"])
    assert report["gradients"].shown_status == "see basic"  # basic owns the failure


def test_a_numpy_function_checked_as_torch_is_pointed_to_api_numpy():
    def numpy_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
        w = np.exp(s - s.max(-1, keepdims=True))
        return (w / w.sum(-1, keepdims=True)) @ v

    report = check_attention(numpy_attention, features=["basic", "causal"])
    assert "add --api numpy" in report.summary()
    assert re.search(r"\nbasic +unsupported +- +- +2 ", str(report))  # no numbers: none judged
    assert check_attention(numpy_attention, api="numpy", features=["basic"]).passed


def test_report_text_json_and_html():
    def evil(q, k, v, **kw):
        return F.scaled_dot_product_attention(q, k, v, **kw)

    evil.__qualname__ = "<script>alert(1)</script>"
    report = check_attention(
        load_target(f"{BROKEN}:bottom_right"), features=["causal", "causal_cross_length"]
    )
    text = str(report)
    assert "causal_cross_length  fail" in text and "smallest failing case: q (1, 2, 3, 8)" in text
    assert text.endswith("1 passed, 1 failed, 0 unsupported")
    data = json.loads(report.to_json())
    assert data["passed"] is False and data["counts"] == {"pass": 1, "fail": 1, "unsupported": 0}
    row = data["features"][1]
    assert row["id"] == "causal_cross_length" and row["status"] == "fail"
    assert row["error"] > row["budget"] > 0 and "rows" in row["failure"]["where"]
    row = check_attention(load_target(f"{BROKEN}:nan_dead_rows"), features=["fully_masked_rows"])
    assert json.loads(row.to_json())["features"][0]["error"] is None  # inf: JSON has none
    # NaN where the reference has numbers was compared: infinite error against a real budget
    assert re.search(r"\nfully_masked_rows +fail +inf +\d\.\d\de-\d+ ", str(row)), str(row)
    page = check_attention(evil, features=["basic"])._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page


VARIANTS = f"{HERE}/variants.py"
VARIANT_BUGS = {  # variants.py function -> the opt-in row it fails and the convention named
    "top_left": ("bottom_right_causal", ["top_left_causal"]),
    "window_wide": ("sliding_window", ["window_one_wider"]),
    "softcap_before_scale": ("softcap", ["softcap_before_scale"]),
    "alibi_sign": ("alibi", ["alibi_sign_flipped"]),
    "cache_ignored": ("kv_cache", ["cache_seqlens_ignored"]),
    "lengths_inclusive": ("key_lengths", ["key_lengths_inclusive"]),
}


def test_opt_in_rows_run_when_declared_and_pass_a_correct_target():
    """A target declares an opt-in row by naming its keyword; the plain torch version of every
    option passes them all (and the default rows), torch's SDPA (no such keyword) runs none."""
    report = check_attention(load_target(f"{VARIANTS}:attention"))
    assert [f.id for f in report.features] == [*FEATURE_IDS, *OPT_IN_IDS]
    assert report.passed, str(report)
    assert [f.id for f in check_attention(F.scaled_dot_product_attention).features] == list(
        FEATURE_IDS
    )


def test_bottom_right_row_agrees_with_torchs_causal_lower_right():
    fn = load_target(f"{VARIANTS}:torch_lower_right")  # torch's own CausalBias: the anchor
    report = check_attention(fn, features=["bottom_right_causal", "causal_cross_length"])
    assert report.passed and report["bottom_right_causal"].cases == 3, str(report)


@pytest.mark.parametrize("bug", VARIANT_BUGS)
def test_each_opt_in_bug_fails_its_row_with_its_convention(bug):
    report = check_attention(load_target(f"{VARIANTS}:{bug}"), features=OPT_IN_IDS)
    row, named = VARIANT_BUGS[bug]
    assert {f.id: f.failure.matches for f in report.failed} == {row: named}, str(report)


def test_an_undeclared_opt_in_row_asked_for_is_unsupported():
    row = check_attention(F.scaled_dot_product_attention, features=["softcap"])["softcap"]
    assert row.status == "unsupported" and "unexpected keyword argument 'softcap'" in row.note


def test_a_last_bit_wobble_is_not_named_dropout():
    noisy = load_target(f"{BROKEN}:noisy")

    def wobbly_gqa_tile(q, k, v, **kw):  # tiles GQA heads and wobbles in the last bit
        return noisy(q, k, v, bug="gqa_tile", **kw)

    row = check_attention(wobbly_gqa_tile, features=["gqa"])["gqa"]
    assert row.failure.matches == ["gqa_tiled"], row
