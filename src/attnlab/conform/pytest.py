"""The conformance kit inside a project's own test suite, one pytest test per feature::

    from attnlab.conform.pytest import conformance_tests
    from mypackage import my_attention
    test_my_attention = conformance_tests(my_attention)

The kit runs once, on the first test; each test reads its row. A failing feature fails its test
with the smallest failing case and where it differs; an unsupported one (the function raised
TypeError, NotImplementedError or "No available kernel") is skipped with the reason, and so is a
row that fails only through another ("see causal": that row's test fails).
pytest is imported only when this module is, so importing ``attnlab.conform`` never needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from .cases import FEATURE_IDS
from .report import FAIL, SEE, UNSUPPORTED, Report
from .run import check_attention, declared


def conformance_tests(
    fn: Callable,
    api: str = "torch",
    *,
    seed: int = 0,
    device: str = "cpu",
    features: Iterable[str] | None = None,
    unsupported: str = "skip",
) -> Callable:
    """A test function parametrised over the kit's features (ids: ``basic``, ``gqa``, ...).

    Assign it to a name starting with ``test_`` in a test module. ``unsupported``: ``"skip"``
    (default) or ``"fail"`` (the project promises every feature).
    """
    ids = [*FEATURE_IDS, *declared(fn)] if features is None else list(features)
    if unsupported not in ("skip", "fail"):
        raise ValueError(f"unsupported must be 'skip' or 'fail', got {unsupported!r}")

    cache: list[Report] = []

    @pytest.mark.parametrize("feature", ids)
    def test_conformance(feature: str) -> None:
        if not cache:
            cache.append(check_attention(fn, api=api, seed=seed, device=device, features=ids))
        row = cache[0][feature]
        if row.status == FAIL:
            f = row.failure
            where = f"\n  differs at: {f.where}" if f.where else ""
            where += f"\n  looks like: {f.what}" if f.what else ""
            pytest.fail(
                f"{feature}: {f.message}\n  smallest failing case: {f.case}{where}", pytrace=False
            )
        if row.status == SEE:
            pytest.skip(f"{feature}: {row.shown_status} ({row.note})")
        if row.status == UNSUPPORTED:
            (pytest.skip if unsupported == "skip" else pytest.fail)(
                f"{feature} unsupported: {row.note}"
            )

    return test_conformance
