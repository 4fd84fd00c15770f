"""``check_attention``: run every feature's cases on a function and build the report.

The function has torch's SDPA signature ``fn(q, k, v, attn_mask=None, dropout_p=0.0,
is_causal=False, scale=None, enable_gqa=False)`` on ``(B, H, T, D)`` tensors (``api="torch"``)
or NumPy arrays (``api="numpy"``). ``calls`` runs one case; a refused case is unsupported;
``owners`` decides which row a failure belongs to.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from ..errors import UserError, closest
from .calls import CaseResult, run_case
from .cases import FEATURE_IDS, FEATURES, OPT_IN, Feature
from .conventions import explain
from .owners import summarize
from .report import UNSUPPORTED, FeatureResult, Report

APIS = ("torch", "numpy")


def run_feature(
    fn, feature: Feature, api: str, device: str, seed: int, threads: int | None = None
) -> list[CaseResult]:
    """Every case of ``feature`` on ``fn``, smallest first (an empty list: not for this api).
    A case that calls twice runs with ``threads`` torch threads (default: as now), so that an
    answer that depends on how threads split the work shows there."""
    if api not in feature.apis:
        return []
    results = []
    for i, case in enumerate(feature.cases):
        rng = np.random.default_rng([seed, zlib.crc32(feature.id.encode()), i])  # stable ids
        with torch_threads(threads if case.repeat else None):
            results.append(run_case(fn, case, api, device, rng))
    return results


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` for the duration (None: left as they are)."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _not_for_api(feature: Feature) -> FeatureResult:
    why = "NumPy has no bfloat16" if feature.id == "bfloat16" else "needs --api torch"
    return FeatureResult(feature.id, feature.title, UNSUPPORTED, note=why)


def _rows(
    fn, ids: list[str], api: str, device: str, seed: int, threads: int | None = None
) -> list[FeatureResult]:
    """The report's rows in the kit's order, each owning only its own failures."""
    results = {fid: run_feature(fn, FEATURES[fid], api, device, seed, threads) for fid in ids}
    rows, failing = {}, set()
    for fid in (f for f in FEATURES if f in results):  # needs come before the rows that need
        feature = FEATURES[fid]
        if api not in feature.apis:
            rows[fid] = _not_for_api(feature)
            continue
        rows[fid], first = summarize(feature, results[fid], failing)
        if first is not None:
            failing.add(fid)
            rows[fid].failing_case = first
            found = explain(fn, first, api, device)
            rows[fid].failure.matches = [i for i, _ in found]
            rows[fid].failure.what = "; or ".join(w for _, w in found)
    return [rows[fid] for fid in ids]


def check_attention(
    fn: Callable,
    api: str = "torch",
    seed: int = 0,
    device: str = "cpu",
    features: Iterable[str] | None = None,
    target: str | None = None,
) -> Report:
    """Run the conformance kit on ``fn``; returns a ``Report`` (``.passed``, ``.features``,
    ``str()``, ``.to_json()``, ``_repr_html_``). ``features`` picks feature ids (default all)."""
    if api not in APIS:
        raise UserError(f"api must be one of {', '.join(APIS)}, got {api!r}")
    ids = feature_ids(features)
    if features is None:
        ids += declared(fn)
    check_device(device, api)
    name = target or getattr(fn, "__qualname__", None) or repr(fn)
    mod = getattr(fn, "__module__", None)
    name = target or (f"{mod}.{name}" if mod and not name.startswith(mod) else name)
    report = Report(name, api, device, seed, torch.__version__)
    # small matrices: one BLAS thread and one torch thread (threads that wait for a busy core
    # cost 100x here: a barrier per op); the cases that call twice get the caller's threads
    threads = torch.get_num_threads()
    with threadpool_limits(1, user_api="blas"), torch_threads(1):
        report.features = _rows(fn, ids, api, device, seed, threads)
    return report


def declared(fn: Callable) -> list[str]:
    """The opt-in rows ``fn`` declares: those whose keyword its signature names (a bare
    ``**kwargs`` declares none: it may swallow a keyword and ignore it)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature declares nothing
        return []
    return [f.id for f in OPT_IN.values() if f.opt_in in params]


def feature_ids(features: Iterable[str] | None) -> list[str]:
    """The feature ids asked for (the default rows for None; opt-in rows run when asked for or
    declared); ``UserError`` naming the first unknown one."""
    ids = list(FEATURE_IDS) if features is None else list(features)
    unknown = [f for f in ids if f not in FEATURES] or ([] if ids else ["(none)"])
    if unknown:
        close = closest(unknown[0], FEATURES)
        hint = f"did you mean {close!r}?" if close else f"expected one of {', '.join(FEATURES)}"
        raise UserError(f"unknown feature {unknown[0]!r}; {hint}")
    return ids


def check_device(device: str, api: str) -> None:
    """One line, exit 2 from the CLI, for a device that cannot run here."""
    if device not in ("cpu", "cuda"):
        raise UserError(f"device must be cpu or cuda, got {device!r}")
    if device == "cuda":
        if api != "torch":
            raise UserError("--device cuda needs --api torch (NumPy arrays live on the CPU)")
        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA GPU is available on this machine")
