"""Runs inside the sandboxed child process: load the submission, call it on each case, save.

Started as ``python -I _child.py WORKDIR`` by ``attnlab.grade.sandbox``. It imports numpy and the
standard library only (never attnlab), loads the inputs without pickle, and writes back plain
arrays plus a JSON status. Nothing it writes is trusted: the grader's verdict is computed in the
parent from the returned arrays.
"""

import builtins
import json
import sys
import traceback
from pathlib import Path

import numpy as np

FILENAME = "submission.py"  # the learner's file name, for tracebacks


def _guard_imports(allowed: set[str]) -> None:
    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        # __import__("x") called by hand passes no globals: look at the calling frame instead
        caller = (globals if globals is not None else sys._getframe(1).f_globals).get(
            "__name__", ""
        )
        top = name.split(".")[0]
        if caller == "submission" and level == 0 and top not in allowed:
            raise ImportError(f"FORBIDDEN_IMPORT:{top}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    import importlib

    real_import_module = importlib.import_module

    def guarded_import_module(name, package=None):
        top = name.split(".")[0]
        if sys._getframe(1).f_globals.get("__name__") == "submission" and top not in allowed:
            raise ImportError(f"FORBIDDEN_IMPORT:{top}")
        return real_import_module(name, package)

    importlib.import_module = guarded_import_module


def _describe(x: object) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray {x.dtype} {x.shape}"
    return type(x).__name__


def main(workdir: str) -> None:
    wd = Path(workdir)
    spec = json.loads((wd / "spec.json").read_text())
    data = np.load(wd / "cases.npz", allow_pickle=False)
    status: dict = {"load_error": None, "cases": []}
    out: dict[str, np.ndarray] = {}
    if spec["allowed"] is not None:
        _guard_imports(set(spec["allowed"]) | set(sys.stdlib_module_names))
    source = (wd / "submission.py").read_text(encoding="utf-8")
    global FILENAME
    FILENAME = spec["filename"]
    env = {"__name__": "submission", "__file__": FILENAME, "__builtins__": builtins}
    try:
        exec(compile(source, FILENAME, "exec"), env)
    except BaseException as e:  # every failure becomes a report
        status["load_error"] = {
            "forbidden": _forbidden(e),
            "traceback": _learner_traceback(e),
        }
        (wd / "status.json").write_text(json.dumps(status))
        return
    fn = env.get(spec["function"])
    if not callable(fn):
        status["load_error"] = {"missing": spec["function"]}
        (wd / "status.json").write_text(json.dumps(status))
        return
    for i, case in enumerate(spec["cases"]):
        args = [data[f"c{i}_{name}"].copy() for name in case["arrays"]]
        entry: dict = {"error": None, "kind": None, "n": 0, "types": None}
        try:
            result = fn(*args, *case["scalars"], **case["kwargs"])
        except BaseException as e:
            entry["error"] = {
                "forbidden": _forbidden(e),
                "traceback": _learner_traceback(e),
            }
            status["cases"].append(entry)
            continue
        parts = list(result) if isinstance(result, (tuple, list)) else [result]
        entry["kind"] = type(result).__name__
        entry["types"] = [_describe(p) for p in parts]
        for j, p in enumerate(parts):
            try:
                arr = np.asarray(p)
            except Exception:
                continue
            if arr.dtype.kind in "biuf":
                out[f"r{i}_{j}"] = arr
        entry["n"] = len(parts)
        for j in range(len(case["arrays"])):
            out[f"a{i}_{j}"] = args[j]  # the inputs after the call, to detect mutation
        status["cases"].append(entry)
    np.savez(wd / "out.npz", **out)
    (wd / "status.json").write_text(json.dumps(status))


def _learner_traceback(e: BaseException) -> str:
    """The traceback without the harness's own frames: only what the learner wrote."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == FILENAME]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(e), e))


def _forbidden(e: BaseException) -> str | None:
    msg = str(e)
    return (
        msg.split(":", 1)[1]
        if isinstance(e, ImportError) and msg.startswith("FORBIDDEN_IMPORT:")
        else None
    )


if __name__ == "__main__":
    main(sys.argv[1])
