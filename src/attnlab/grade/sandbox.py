"""Run learner code in a separate, limited process and bring back only arrays.

The child is ``python -I`` (no user site, no PYTHONPATH, no cwd on sys.path) with no stdin, a
wall-clock timeout, an address-space limit, one BLAS thread and a minimal environment. It
receives inputs as a NumPy ``.npz`` (loaded without pickle) and returns plain numeric arrays the
same way. Its stdout and stderr are captured and never parsed, so printing cannot forge a report.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CHILD = Path(__file__).with_name("_child.py")
KEEP_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "SYSTEMROOT",
)


@dataclass
class CaseResult:
    outputs: list[np.ndarray] = field(default_factory=list)  # numeric parts of the return value
    n_parts: int = 0
    kind: str | None = None  # type name of the return value
    types: list[str] | None = None
    inputs_after: list[np.ndarray] = field(default_factory=list)
    error: str | None = None  # traceback
    forbidden: str | None = None


@dataclass
class RunResult:
    cases: list[CaseResult]
    load_error: str | None = None
    forbidden: str | None = None
    missing: str | None = None
    timeout: bool = False
    crashed: str | None = None  # the child died without a status (killed, out of memory)
    stdout: str = ""
    stderr: str = ""


def _limits(memory_mb: int):
    def apply() -> None:
        import resource

        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_submission(
    source: str,
    function: str,
    cases: list[dict],
    allowed_imports: list[str] | None,
    timeout: float = 10.0,
    memory_mb: int = 2048,
    filename: str = "submission.py",
) -> RunResult:
    """Call ``function`` from ``source`` on every case in a sandboxed child process.

    Each case is ``{"arrays": {name: ndarray}, "scalars": [...], "kwargs": {...}}``; arrays are
    passed positionally in order, then the scalars, then the keyword arguments.
    """
    with tempfile.TemporaryDirectory(prefix="attnlab-grade-") as tmp:
        wd = Path(tmp)
        (wd / "submission.py").write_text(source, encoding="utf-8")
        arrays = {f"c{i}_{n}": a for i, c in enumerate(cases) for n, a in c["arrays"].items()}
        np.savez(wd / "cases.npz", **arrays)
        spec = {
            "function": function,
            "allowed": allowed_imports,
            "filename": filename,
            "cases": [
                {
                    "arrays": list(c["arrays"]),
                    "scalars": c.get("scalars", []),
                    "kwargs": c.get("kwargs", {}),
                }
                for c in cases
            ],
        }
        (wd / "spec.json").write_text(json.dumps(spec))
        env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
        env.update(
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            PYTHONHASHSEED="0",
            PYTHONDONTWRITEBYTECODE="1",
            HOME=tmp,
        )
        proc = subprocess.Popen(
            [sys.executable, "-I", str(CHILD), tmp],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp,
            env=env,
            start_new_session=True,
            preexec_fn=_limits(memory_mb) if os.name == "posix" else None,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return RunResult([], timeout=True, stdout=_text(out), stderr=_text(err))
        status_file = wd / "status.json"
        if not status_file.exists():
            why = f"exit code {proc.returncode}" + (
                f" (signal {-proc.returncode})" if proc.returncode < 0 else ""
            )
            tail = _text(err).strip().splitlines()[-3:]
            return RunResult(
                [],
                crashed=why + ("\n" + "\n".join(tail) if tail else ""),
                stdout=_text(out),
                stderr=_text(err),
            )
        status = json.loads(status_file.read_text())
        result = RunResult([], stdout=_text(out), stderr=_text(err))
        le = status["load_error"]
        if le is not None:
            result.forbidden = le.get("forbidden")
            result.missing = le.get("missing")
            result.load_error = le.get("traceback")
            return result
        data = np.load(wd / "out.npz", allow_pickle=False) if (wd / "out.npz").exists() else {}
        for i, entry in enumerate(status["cases"]):
            cr = CaseResult(n_parts=entry["n"], kind=entry["kind"], types=entry["types"])
            if entry["error"] is not None:
                cr.error, cr.forbidden = entry["error"]["traceback"], entry["error"]["forbidden"]
            else:
                cr.outputs = [
                    data[f"r{i}_{j}"] if f"r{i}_{j}" in data else None for j in range(entry["n"])
                ]
                cr.inputs_after = [data[f"a{i}_{j}"] for j in range(len(cases[i]["arrays"]))]
            result.cases.append(cr)
        return result


def _text(b: bytes | None) -> str:
    return (b or b"").decode("utf-8", errors="replace")
