"""``check_attention``: run every feature's cases on a function and build the report.

The function has torch's SDPA signature ``fn(q, k, v, attn_mask=None, dropout_p=0.0,
is_causal=False, scale=None, enable_gqa=False)`` on ``(B, H, T, D)`` tensors (``api="torch"``)
or NumPy arrays (``api="numpy"``). A case the function refuses (``REFUSALS``: ``TypeError``,
``NotImplementedError``, or a ``RuntimeError`` saying "No available kernel", as torch's backends
do) before returning an output is unsupported, not failed; any other exception fails the case.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from ..errors import UserError, closest
from ..parity import Parity
from .cases import FEATURES, Case, Feature
from .inputs import Inputs, as_numpy, as_torch, draw
from .judge import budget, judge, locate
from .reference import GRAD_NAMES, reference, torch_own
from .report import FAIL, PASS, UNSUPPORTED, Failure, FeatureResult, Report

APIS = ("torch", "numpy")


NO_KERNEL = ("no available kernel", "no viable backend")


class Unsupported(Exception):
    """The function refused this case (see ``is_refusal``), or cannot do it."""


def is_refusal(e: BaseException) -> bool:
    """A refusal rather than a bug: ``TypeError`` (an argument it does not take),
    ``NotImplementedError``, or a torch backend's ``RuntimeError`` "No available kernel" /
    "No viable backend" (raised before any output for inputs it has no kernel for)."""
    if isinstance(e, (TypeError, NotImplementedError)):
        return True
    said = str(e).lower()
    return isinstance(e, RuntimeError) and any(w in said for w in NO_KERNEL)


@dataclass
class CaseResult:
    case: Case
    parity: Parity | None  # None: unsupported
    where: str = ""
    note: str = ""


def _call(fn: Callable, args: dict, kwargs: dict):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(args["q"], args["k"], args["v"], **kwargs)
    except Exception as e:
        if not is_refusal(e):
            raise
        raise Unsupported(f"{type(e).__name__}: {e}".splitlines()[0][:200]) from None


def _as_array(x: object, api: str, want_dtype: str, want_shape: tuple) -> np.ndarray | str:
    """The answer as NumPy (bfloat16 as float32), or a sentence saying why it is not one."""
    if api == "torch":
        if not isinstance(x, torch.Tensor):
            return f"returned {type(x).__name__}, expected a torch.Tensor"
        got_dtype = str(x.dtype).removeprefix("torch.")
        x = x.detach().cpu()
        x = x.float() if x.dtype == torch.bfloat16 else x
        a = x.numpy()
    else:
        if isinstance(x, torch.Tensor) or not hasattr(x, "dtype"):
            return f"returned {type(x).__name__}, expected a NumPy array"
        a = np.asarray(x)
        got_dtype = a.dtype.name
    if tuple(a.shape) != tuple(want_shape):
        return f"returned shape {tuple(a.shape)}, expected {tuple(want_shape)}"
    if got_dtype != want_dtype:
        return f"returned dtype {got_dtype} for {want_dtype} inputs"
    return a


def _args(inp: Inputs, api: str, device: str) -> dict:
    return as_torch(inp, device) if api == "torch" else as_numpy(inp)


def _outputs(fn, inp: Inputs, api: str, device: str) -> tuple[dict[str, object], str]:
    """Call ``fn`` on the case; return its outputs (out, and dq/dk/dv) and a failure note."""
    c = inp.case
    args = _args(inp, api, device)
    if c.grads:
        for n in ("q", "k", "v"):
            args[n] = args[n].detach().requires_grad_()
    out = _call(fn, args, inp.kwargs(args.get("mask")))
    got: dict[str, object] = {"out": out}
    note = ""
    if c.grads:
        if not isinstance(out, torch.Tensor):
            return got, ""  # judged as it is (not a tensor: a failure that names what came)
        if not out.requires_grad:
            raise Unsupported("the output is not differentiable (it does not require grad)")
        try:
            out.backward(args["grad_out"])
        except RuntimeError as e:
            return got, f"backward raised RuntimeError: {str(e).splitlines()[0][:200]}"
        got.update(zip(GRAD_NAMES, (args[n].grad for n in "qkv"), strict=True))
    if c.repeat:
        again = _call(fn, args, inp.kwargs(args.get("mask")))
        note = _same(out, again, args, inp, api)
    return got, note


def _same(out, again, args: dict, inp: Inputs, api: str) -> str:
    """'' when two calls agree bit for bit and the inputs are unchanged, else why not."""
    a, b = (np.asarray(x.detach().cpu().double() if api == "torch" else x) for x in (out, again))
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
        diff = np.abs(a.astype(np.float64) - b) if a.shape == b.shape else None
        how = f" (they differ by up to {np.nanmax(diff):.3g})" if diff is not None else ""
        return f"two calls on the same inputs gave different outputs{how}"
    for n in ("q", "k", "v"):
        now = np.asarray(args[n].detach().cpu().double() if api == "torch" else args[n])
        if not np.array_equal(now.astype(np.float64), inp.seen[n], equal_nan=True):
            return f"the function modified its input {n} in place"
    return ""


def _judge_output(name: str, x, oracle, naive, case: Case, api: str, label: str) -> CaseResult:
    """One output (out, dq, dk or dv) against the reference: parity, then where it misses."""
    a = _as_array(x, api, case.dtype, oracle.shape)
    if isinstance(a, str):
        tol = budget(oracle, naive, case.dtype)
        return CaseResult(case, Parity(False, float("inf"), tol, f"{label}{a}"))
    p = judge(a, oracle, naive, case.dtype)
    tol = p.tolerance or budget(oracle, naive, case.dtype)
    if p.ok:
        return CaseResult(case, Parity(True, p.max_abs_err, tol))
    where = locate(a, oracle, tol, "key rows" if name in ("dk", "dv") else "rows")
    return CaseResult(case, Parity(False, p.max_abs_err, tol, label + p.message), label + where)


def run_case(fn, case: Case, api: str, device: str, rng: np.random.Generator) -> CaseResult:
    """Draw the case's inputs, call ``fn``, and judge every output; the worst one speaks."""
    inp = draw(case, rng)
    oracle = reference(inp)
    naive = torch_own(inp, oracle, device)
    try:
        got, note = _outputs(fn, inp, api, device)
    except Unsupported as e:
        return CaseResult(case, None, note=str(e))
    except Exception as e:  # the function's own bug: fail the case, keep going
        msg = f"raised {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        return CaseResult(case, Parity(False, float("inf"), 0.0, msg))
    results = []
    for name, want in oracle.items():
        label = f"{name}: " if len(oracle) > 1 else ""
        if name != "out" and got.get(name) is None:
            if not isinstance(got["out"], torch.Tensor):  # what came instead says it all
                return results[0]
            msg = note or f"no gradient reached {name[1]}"
            return CaseResult(case, Parity(False, float("inf"), 0.0, msg))
        results.append(_judge_output(name, got[name], want, naive.get(name), case, api, label))
    worst = max(results, key=_ratio)
    if note:  # e.g. not deterministic: fails however close the output is
        return CaseResult(
            case, Parity(False, worst.parity.max_abs_err, worst.parity.tolerance, note)
        )
    return worst


def _ratio(r: CaseResult) -> float:
    p = r.parity
    return p.max_abs_err / p.tolerance if p.tolerance else float("inf")


def run_feature(fn, feature: Feature, api: str, device: str, seed: int) -> FeatureResult:
    res = FeatureResult(feature.id, feature.title, PASS, cases=0)
    if api not in feature.apis:
        why = "NumPy has no bfloat16" if feature.id == "bfloat16" else "needs --api torch"
        res.status, res.note = UNSUPPORTED, why
        return res
    results = []
    for i, case in enumerate(feature.cases):
        rng = np.random.default_rng([seed, zlib.crc32(feature.id.encode()), i])  # stable ids
        results.append(run_case(fn, case, api, device, rng))
    res.cases = len(results)
    judged = [r for r in results if r.parity is not None]
    refused = [r for r in results if r.parity is None]
    if judged:
        worst = max(judged, key=_ratio)
        res.error, res.budget = worst.parity.max_abs_err, worst.parity.tolerance
    failing = [r for r in judged if not r.parity.ok]
    if failing:
        first = failing[0]
        msg = first.parity.message or "differs from the reference"
        res.status = FAIL
        res.failure = Failure(first.case.describe(), msg, first.where)
    elif refused:
        res.status = UNSUPPORTED
    if refused:
        res.refusal = refused[0].note
        res.note = (
            f"{len(refused)} of {len(results)} cases refused, e.g. {refused[0].case.describe()}: "
            f"{refused[0].note}"
        )
    return res


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
    check_device(device, api)
    name = target or getattr(fn, "__qualname__", None) or repr(fn)
    mod = getattr(fn, "__module__", None)
    name = target or (f"{mod}.{name}" if mod and not name.startswith(mod) else name)
    report = Report(name, api, device, seed, torch.__version__)
    # small matrices: one BLAS thread (threads that wait for a busy core cost 100x here)
    with threadpool_limits(1, user_api="blas"):
        for fid in ids:
            report.features.append(run_feature(fn, FEATURES[fid], api, device, seed))
    return report


def feature_ids(features: Iterable[str] | None) -> list[str]:
    """The feature ids asked for (all for None); ``UserError`` naming the first unknown one."""
    ids = list(FEATURES) if features is None else list(features)
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
