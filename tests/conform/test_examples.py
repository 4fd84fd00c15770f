"""The examples/ adapters under the kit (skipped where transformers / x-transformers are absent):
the differences the kit reports are the libraries' documented conventions."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlab.conform import check_attention, load_target

EXAMPLES = Path(__file__).parents[2] / "examples"
BR = "bottom_right_causal"


def test_hugging_face_adapters():
    pytest.importorskip("transformers")
    sdpa = load_target(f"{EXAMPLES}/hf_attention.py:sdpa")
    report = check_attention(sdpa, features=["causal", "causal_cross_length", "single_query"])
    # one query: transformers' SDPA path turns is_causal off (it sees every key)
    assert {f.id: f.failure.matches for f in report.failed} == {
        "single_query": [BR, "causal_ignored"]
    }, str(report)
    eager = load_target(f"{EXAMPLES}/hf_attention.py:eager")
    report = check_attention(eager, features=["causal_cross_length", "fully_masked_rows"])
    assert {f.id: f.failure.matches for f in report.failed} == {
        "causal_cross_length": [BR],  # masks from cache positions: bottom-right
        "fully_masked_rows": ["masked_rows_mean_v"],  # finfo.min fill: uniform weights
    }, str(report)


def test_x_transformers_adapter():
    pytest.importorskip("x_transformers")
    attend = load_target(f"{EXAMPLES}/x_transformers_attend.py:attend_flash")
    report = check_attention(attend, features=["basic", "gqa", "causal_cross_length"])
    assert {f.id: f.failure.matches for f in report.failed} == {
        "gqa": ["gqa_tiled"],  # repeat 'b kvh n d -> b (r kvh) n d': head h uses h % Hk
        "causal_cross_length": [BR],
    }, str(report)
