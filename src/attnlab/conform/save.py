"""``--save-failing DIR``: each failing row's smallest case as a folder a user can rerun.

``DIR/<row>/case.npz`` holds the inputs exactly as the target received them (float64 values of
the case's dtype; bool masks as bool), ``expected_<out|dq|dk|dv>`` (the float64 reference),
``got_<...>`` (the target's answer) and ``budget_<...>`` (the tolerance); ``np.load`` reads it
with ``allow_pickle=False``. ``DIR/<row>/repro.py`` loads the target, calls it on those inputs
with the case's arguments, and exits 1 while the answer still misses the budget.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .calls import CaseResult
from .inputs import EXTRA
from .judge import budget
from .report import Report


def save_failing(report: Report, folder: Path, target: str) -> list[Path]:
    """Write every failing row's smallest case under ``folder`` (made if need be; the command
    checked it can be, ``attnlab.files.check_output``, before the run); the folders written."""
    written = []
    for row in report.features:
        r = row.failing_case
        if r is None or r.inp is None:
            continue
        d = folder / row.id
        d.mkdir(parents=True, exist_ok=True)
        np.savez(d / "case.npz", **_arrays(r))
        script = _script(r, _loadable(target), report.api, report.device, row.id)
        (d / "repro.py").write_text(script, encoding="utf-8")
        written.append(d)
    return written


def _arrays(r: CaseResult) -> dict[str, np.ndarray]:
    out = dict(r.inp.seen)
    for name, want in r.oracle.items():
        out[f"expected_{name}"] = want
        out[f"budget_{name}"] = np.float64(budget(want, r.naive.get(name), r.case.dtype))
        if name in r.got:
            out[f"got_{name}"] = r.got[name]
    return out


def _loadable(target: str) -> str:
    """A file target with an absolute path, so the script runs from any folder."""
    where, _, attr = target.rpartition(":")
    if where.endswith(".py") or os.sep in where or "/" in where:
        return f"{Path(where).resolve()}:{attr}"
    return target


_HEAD = '''"""Reproduce attnlab conform's smallest failing case of the row {row!r} for
{target}

case: {case}
failure: {message}
Run `python repro.py`: it prints the error against the budget and exits 1 while it misses.
"""

import sys
from pathlib import Path

import numpy as np
{torch_import}
from attnlab.conform import load_target

data = np.load(Path(__file__).with_name("case.npz"), allow_pickle=False)
fn = load_target({target!r})
'''

_TORCH = """DTYPE = torch.{dtype}


def arg(name):  # as the kit passed it: the case's dtype on {device!r} (a bool mask stays bool,
    t = torch.from_numpy(data[name])  # lengths int32, ALiBi slopes float32)
    if t.dtype == torch.bool:
        return t.to({device!r})
    if not t.is_floating_point():
        return t.to({device!r}, torch.int32)
    return t.to({device!r}, torch.float32 if name == "alibi_slopes" else DTYPE)


def plain(x):
    return x.detach().cpu().double().numpy()
"""

_NUMPY = """def arg(name):  # as the kit passed it: the case's dtype (a bool mask stays bool,
    a = data[name]  # lengths int32, ALiBi slopes float32)
    if a.dtype == bool:
        return a
    if a.dtype.kind in "iu":
        return a.astype(np.int32)
    return a.astype(np.float32 if name == "alibi_slopes" else np.{dtype})


def plain(x):
    return np.asarray(x, dtype=np.float64)
"""

_STRIDED = {
    "torch": """q = q.transpose(1, 2).contiguous().transpose(1, 2)  # non-contiguous views
wide = torch.full((*k.shape[:-1], 2 * k.shape[-1]), float("nan"), dtype=k.dtype, device=k.device)
wide[..., : k.shape[-1]] = k
k = wide[..., : k.shape[-1]]
v = v.transpose(-1, -2).contiguous().transpose(-1, -2)
""",
    "numpy": """q = np.ascontiguousarray(q.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)  # views
wide = np.full((*k.shape[:-1], 2 * k.shape[-1]), np.nan, dtype=k.dtype)
wide[..., : k.shape[-1]] = k
k = wide[..., : k.shape[-1]]
v = np.ascontiguousarray(v.swapaxes(-1, -2)).swapaxes(-1, -2)
""",
}

_TAIL = """

def error(got, want):  # NaN where the reference has none (or the reverse) counts as infinite
    if got.shape != want.shape or (np.isnan(got) != np.isnan(want)).any():
        return float("inf")
    ok = ~np.isnan(want)
    return float(np.max(np.abs(got[ok] - want[ok]), initial=0.0))


failed = False
for name, x in answers.items():
    err, tol = error(plain(x), data["expected_" + name]), float(data["budget_" + name])
    print(f"{{name}}: max abs error {{err:.3g}}, budget {{tol:.3g}}")
    failed |= not err <= tol
sys.exit(1 if failed else 0)
"""


def _call_lines(r: CaseResult, api: str) -> str:
    c = r.inp.case
    kwargs = r.inp.kwargs(None)  # attn_mask is passed from case.npz
    lines = ["q, k, v = arg('q'), arg('k'), arg('v')"]
    if c.layout == "strided":
        lines.append(_STRIDED[api].rstrip())
    arrays = [("attn_mask", "mask")] if "mask" in r.inp.seen else []
    arrays += [(n, n) for n in EXTRA if n in r.inp.seen]
    mask = "".join(f", {kw}=arg({name!r})" for kw, name in arrays)
    if c.grads:
        lines.append("q, k, v = (x.requires_grad_() for x in (q, k, v))")
    lines.append(f"out = fn(q, k, v{mask}, **{kwargs!r})")
    lines.append('answers = {"out": out}')
    if c.grads:
        lines.append('out.backward(arg("grad_out"))')
        lines.append("answers.update(dq=q.grad, dk=k.grad, dv=v.grad)")
    if c.repeat:
        lines.append("again = plain(fn(q, k, v" + mask + f", **{kwargs!r}))")
        lines.append('print("two calls agree bit for bit:", np.array_equal(plain(out), again))')
    return "\n".join(lines)


def _script(r: CaseResult, target: str, api: str, device: str, row: str) -> str:
    c = r.inp.case
    head = _HEAD.format(
        row=row,
        target=target,
        case=c.describe(),
        message=r.parity.message if r.parity else "",
        torch_import="import torch\n" if api == "torch" else "",
    )
    body = (_TORCH if api == "torch" else _NUMPY).format(dtype=c.dtype, device=device)
    return f"{head}\n\n{body}\n\n{_call_lines(r, api)}\n{_TAIL.format()}"
