"""One case: draw its inputs, call the target, and judge every output against the reference.

A case the function refuses (``is_refusal``: ``TypeError``, ``NotImplementedError``, or a
``RuntimeError`` saying "No available kernel", as torch's backends do) before returning an output
is unsupported, not failed; any other exception fails the case.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..parity import Parity
from .cases import Case
from .inputs import Inputs, as_numpy, as_torch, draw
from .judge import budget, judge, locate
from .reference import GRAD_NAMES, backward, reference, torch_own

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
    """One case's verdict; ``inp``, ``oracle`` and ``got`` (the answers as NumPy arrays, where
    they were arrays) let a failure be explained and saved."""

    case: Case
    parity: Parity | None  # None: unsupported
    where: str = ""
    note: str = ""
    inp: Inputs | None = None
    oracle: dict[str, np.ndarray] = field(default_factory=dict)
    naive: dict[str, np.ndarray] = field(
        default_factory=dict
    )  # torch's own, the budget's yardstick
    got: dict[str, np.ndarray] = field(default_factory=dict)


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


def call_again(fn, inp: Inputs, api: str, device: str) -> np.ndarray | None:
    """The target's output for ``inp`` once more (None if it raised or is no array)."""
    args = _args(inp, api, device)
    try:
        return _plain(_call(fn, args, inp.kwargs(args)))
    except Exception:  # an explanation is a bonus: a second call that fails explains nothing
        return None


def _args(inp: Inputs, api: str, device: str) -> dict:
    return as_torch(inp, device) if api == "torch" else as_numpy(inp)


def _outputs(fn, inp: Inputs, api: str, device: str) -> tuple[dict[str, object], str]:
    """Call ``fn`` on the case; return its outputs (out, and dq/dk/dv) and a failure note."""
    c = inp.case
    args = _args(inp, api, device)
    if c.grads:
        for n in ("q", "k", "v"):
            args[n] = args[n].detach().requires_grad_()
    out = _call(fn, args, inp.kwargs(args))
    got: dict[str, object] = {"out": out}
    note = ""
    if c.grads:
        if not isinstance(out, torch.Tensor):
            return got, ""  # judged as it is (not a tensor: a failure that names what came)
        if not out.requires_grad:
            raise Unsupported("the output is not differentiable (it does not require grad)")
        try:
            backward(out, args["grad_out"])
        except RuntimeError as e:
            return got, f"backward raised RuntimeError: {str(e).splitlines()[0][:200]}"
        got.update(zip(GRAD_NAMES, (args[n].grad for n in "qkv"), strict=True))
    if c.repeat:
        again = _call(fn, args, inp.kwargs(args))
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
        return _nothing_to_compare(case, f"{label}{a}")
    p = judge(a, oracle, naive, case.dtype)
    tol = p.tolerance or budget(oracle, naive, case.dtype)
    if p.ok:
        return CaseResult(case, Parity(True, p.max_abs_err, tol))
    where = locate(a, oracle, tol, "key rows" if name in ("dk", "dv") else "rows")
    return CaseResult(case, Parity(False, p.max_abs_err, tol, label + p.message), label + where)


def _nothing_to_compare(case: Case, msg: str, **seen) -> CaseResult:
    """A failed case that gave no array to judge (it raised; its output had the wrong type,
    dtype or shape; no gradient came): infinite error and no budget, which the report's table
    shows as '-', leaving ``msg`` to say what happened."""
    return CaseResult(case, Parity(False, float("inf"), 0.0, msg), **seen)


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
        return _nothing_to_compare(case, msg, inp=inp, oracle=oracle)
    result = _judge_all(got, note, oracle, naive, case, api)
    result.inp, result.oracle, result.naive = inp, oracle, naive
    result.got = {n: a for n, x in got.items() if isinstance(a := _plain(x), np.ndarray)}
    return result


def _plain(x: object) -> np.ndarray | None:
    """An answer as a NumPy array (bfloat16 as float32), or None when it is no array."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    return x if isinstance(x, np.ndarray) else None


def _judge_all(got: dict, note: str, oracle: dict, naive: dict, case: Case, api: str) -> CaseResult:
    results = []
    for name, want in oracle.items():
        label = f"{name}: " if len(oracle) > 1 else ""
        if name != "out" and got.get(name) is None:
            if not isinstance(got["out"], torch.Tensor):  # what came instead says it all
                return results[0]
            msg = note or f"no gradient reached {name[1]}"
            return _nothing_to_compare(case, msg)
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
