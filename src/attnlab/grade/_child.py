"""Runs inside the sandbox: load the submission, call it on each case, send the results back.

Sent as text after ``tracer.py`` (its ``record``, ``MAX_CELLS`` and ``MAX_EVENTS`` are defined
above this module's code in the child), which traces the cases the parent marks.

Started as ``python -I -S -c <this file> FD_IN FD_OUT SITE DROP_UID LATE`` by
``attnlab.grade.sandbox``; it is passed as text, because the sandbox cannot see attnlab. It
imports NumPy and the standard library only. FD_IN is a memfd holding the spec, the source and
the input arrays (``_read_input``: a JSON header, then the arrays' raw bytes; no pickle). FD_OUT
is a pipe: a start marker first, then the results in a format the parent can bound before it
reads a byte of data: two 8-byte lengths (header, data), a JSON header (the status and, per
array, its key, dtype and shape), then the raw bytes of the arrays no larger than ``room``
allows for their expected shape. Nothing sent back is trusted: the parent checks every declared
size against the exercise's shapes, and computes the verdict from the arrays itself.
"""

import builtins
import json
import math
import os
import sys
import traceback

try:  # in the child, tracer.py's code runs ahead of this module's (see the docstring)
    record, MAX_CELLS  # noqa: B018
except NameError:  # imported by the parent, for its constants
    from .tracer import MAX_CELLS, record

MAGIC = b"ATTNLAB-SANDBOX-1\n"
FILENAME = "submission.py"  # the learner's file name, for tracebacks
# the learner's modules: the submission and the helper modules handed in beside it (by module
# name and by file name); their imports are held to the same allow-list
LEARNER_NAMES = {"submission"}
LEARNER_FILES = {FILENAME}


def _drop_privileges(uid: int) -> None:
    """Become ``uid`` for good: under bwrap as root, the host's nobody (65534 in a namespace that
    maps it to itself); in process isolation as root, the grading's own unprivileged uid."""
    import resource

    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    resource.setrlimit(resource.RLIMIT_NPROC, (128, 128))  # counts host nobody's processes


def _guard_imports(allowed: set[str]) -> None:
    """Clear messages for imports the exercise forbids (the sandbox lacks the modules anyway)."""
    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        # __import__("x") called by hand passes no globals: look at the calling frame instead
        caller = (globals if globals is not None else sys._getframe(1).f_globals).get(
            "__name__", ""
        )
        top = name.split(".")[0]
        if caller in LEARNER_NAMES and level == 0 and top not in allowed:
            _note(top)
            raise ImportError(f"FORBIDDEN_IMPORT:{top}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    import importlib

    real_import_module = importlib.import_module

    def guarded_import_module(name, package=None):
        top = name.split(".")[0]
        if sys._getframe(1).f_globals.get("__name__") in LEARNER_NAMES and top not in allowed:
            _note(top)
            raise ImportError(f"FORBIDDEN_IMPORT:{top}")
        return real_import_module(name, package)

    importlib.import_module = guarded_import_module


FORBIDDEN_PATH = ("attnlab", "torch")
PATH_EVENTS = ("open", "os.listdir", "os.scandir", "glob.glob", "os.chdir", "shutil.copyfile")
ATTEMPTS: list = []  # forbidden modules or files the submission sought, by any route


def _in_submission(f) -> bool:
    return f.f_code.co_filename in LEARNER_FILES or f.f_globals.get("__name__") in LEARNER_NAMES


def _from_submission(direct: bool = False) -> bool:
    """Whether the submission's code is on the stack; ``direct``: it is the caller, once the
    import machinery's own frames are skipped (NumPy's internal imports are not its doing)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if _in_submission(f):
            return True
        if direct and not (name.startswith("<frozen") or "importlib" in name or "pkgutil" in name):
            return False
        f = f.f_back
    return False


def _sought(top: str, allowed) -> None:
    """A module lookup: noted when it is forbidden and the submission asked for it (or for
    attnlab/torch from anywhere the submission called)."""
    if top in allowed:
        return
    if _from_submission(direct=top not in FORBIDDEN_PATH):
        _note(top)


def _note(what: str) -> None:
    if what not in ATTEMPTS and len(ATTEMPTS) < 10:
        ATTEMPTS.append(what)


class _Watch:
    """First on sys.meta_path: sees every lookup of a module not yet loaded (import statement,
    __import__, importlib.import_module, importlib.util.find_spec, pkgutil) and finds nothing."""

    def __init__(self, allowed: set[str]):
        self.allowed = allowed

    def find_spec(self, name, path=None, target=None):
        _sought(name.split(".")[0], self.allowed)
        return None


class _Helpers:
    """Serves the helper modules handed in beside the submission (``import utils``) from the
    copies the parent sent: read-only (nothing the code does changes what the next import
    reads), each run under its own module name and file name, so the import guard and the
    tracebacks treat it as the learner's code."""

    def __init__(self, helpers: dict):
        self.helpers = helpers  # {module name: [file name, source]}

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in self.helpers:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, self, origin=self.helpers[name][0])

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        filename, source = self.helpers[module.__name__]
        module.__file__ = filename
        exec(compile(source, filename, "exec"), module.__dict__)


def _serve_helpers(helpers: dict, allowed: set[str] | None) -> None:
    """Make the helpers importable and count them as the learner's modules."""
    if not helpers:
        return
    LEARNER_NAMES.update(helpers)
    LEARNER_FILES.update(f for f, _ in helpers.values())
    if allowed is not None:
        allowed.update(helpers)
    sys.meta_path.insert(1 if allowed is not None else 0, _Helpers(helpers))


def _watch(allowed: set[str]) -> None:
    """Record every attempt to reach a forbidden module: module lookups (a meta path finder
    that cannot be bypassed by any import route) and paths into attnlab or torch (an audit
    hook, which cannot be removed)."""
    sys.meta_path.insert(0, _Watch(allowed))

    def hook(event, args):
        if event in PATH_EVENTS and args:
            path = args[0]
            if isinstance(path, (str, bytes, os.PathLike)):
                text = os.fsdecode(os.fspath(path)) if not isinstance(path, str) else path
                parts = text.replace("\\", "/").split("/")
                for name in FORBIDDEN_PATH:
                    if any(p == name or p.startswith(name + ".") for p in parts):
                        if _from_submission():
                            _note(name)
        elif event == "import" and args:
            _sought(str(args[0]).split(".")[0], allowed)

    sys.addaudithook(hook)


def _snapshot(modules) -> dict[str, int]:
    """Identity of every public attribute of ``modules``: what the submission must not replace.
    Only what is loaded (``vars``): ``getattr`` on every name in ``dir(numpy)`` would import
    each of NumPy's lazily loaded submodules."""
    return {
        f"{m.__name__}.{name}": id(value)
        for m in modules
        for name, value in vars(m).items()
        if not name.startswith("_")
    }


def _tampered(before: dict[str, int], modules) -> list[str]:
    after = _snapshot(modules)
    return sorted(k for k, v in before.items() if after.get(k, v) != v)


def _describe(x, np) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray {x.dtype} {x.shape}"
    return type(x).__name__


TRACEBACK_KEEP = 8192  # characters kept from each end of a traceback (the parent caps too)
PLAIN_DTYPES = ("|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8")


def _learner_traceback(e: BaseException) -> str:
    """The traceback without the harness's own frames: only what the learner wrote, its middle
    cut when it is long (an exception message can be made of megabytes)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename in LEARNER_FILES]
    frames = frames[-20:]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    try:
        text = "".join(lines + traceback.format_exception_only(type(e), e))
    except BaseException:  # a __str__ that raises
        text = "".join(lines) + type(e).__name__ + ": (its message could not be shown)\n"
    if len(text) > 2 * TRACEBACK_KEEP:
        cut = len(text) - 2 * TRACEBACK_KEEP
        text = f"{text[:TRACEBACK_KEEP]}\n... ({cut} characters cut) ...\n{text[-TRACEBACK_KEEP:]}"
    return text


def _forbidden(e: BaseException, allowed: set[str] | None) -> str | None:
    """The forbidden module an import error is about: by our guard, or missing from the sandbox."""
    msg = str(e)
    if isinstance(e, ImportError) and msg.startswith("FORBIDDEN_IMPORT:"):
        return msg.split(":", 1)[1]
    if allowed is not None and isinstance(e, ModuleNotFoundError) and e.name:
        top = e.name.split(".")[0]
        return top if top not in allowed else None
    return None


def _failure(e: BaseException, allowed) -> dict:
    return {"forbidden": _forbidden(e, allowed), "traceback": _learner_traceback(e)}


def _plain(p, np):
    """``p`` as an array of one of the plain dtypes, little-endian, or None."""
    try:
        arr = np.asarray(p)
    except Exception:
        return None
    if arr.dtype.kind not in "biuf":
        return None
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
        arr = arr.astype(np.float64)  # long double: judged as float64
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return arr if arr.dtype.str in PLAIN_DTYPES else None


def _call_cases(fn, spec, data, np) -> tuple[list, dict]:
    cases, out = [], {}
    for i, case in enumerate(spec["cases"]):
        args = [data[f"c{i}_{name}"].copy() for name in case["arrays"]]
        entry = {"error": None, "kind": None, "n": 0, "types": None}
        try:
            if case.get("trace"):  # line by line, the arrays it makes (tracer.py, sent ahead)
                result, events = record(fn, (*args, *case["scalars"]), case["kwargs"], {FILENAME})
                entry["trace"] = [[e.line, e.name[:64]] for e in events]
                out |= {f"t{i}_{k}": e.value for k, e in enumerate(events)}
            else:
                result = fn(*args, *case["scalars"], **case["kwargs"])
        except BaseException as e:  # every failure becomes a report
            entry["error"] = _failure(e, spec["allowed_set"])
            cases.append(entry)
            continue
        parts = list(result) if isinstance(result, (tuple, list)) else [result]
        entry.update(kind=type(result).__name__[:100], n=len(parts))
        keep = parts[: len(case["expect"])]  # the parent reads no more parts than expected
        entry["types"] = [_describe(p, np)[:200] for p in keep]
        for j, p in enumerate(keep):
            arr = _plain(p, np)
            if arr is not None:
                out[f"r{i}_{j}"] = arr
        for j, a in enumerate(args):
            out[f"a{i}_{j}"] = a  # the inputs after the call, to detect mutation
        cases.append(entry)
    return cases, out


def room(shape) -> int:
    """The most elements the parent reads for an array expected in ``shape``: a wrong shape
    is judged too, up to 16 times the right size (the parent's own rule, shared)."""
    return max(16 * math.prod(shape), 4096)


def _room_for(key: str, spec) -> int:
    if key[0] == "t":
        return MAX_CELLS  # a traced value (tracer.py)
    i, j = (int(x) for x in key[1:].split("_"))
    case = spec["cases"][i]
    return room(case["expect"][j] if key[0] == "r" else case["shapes"][j])


def _send(fd: int, status: dict, arrays: dict, np, spec=None) -> None:
    header, data = [], []
    for key, arr in arrays.items():
        arr = _plain(arr, np)
        if arr is None:
            continue
        header.append([key, arr.dtype.str, list(arr.shape)])
        if spec is not None and arr.size <= _room_for(key, spec):  # else refused unread
            data.append(np.ascontiguousarray(arr))
    status["arrays"] = header
    head = json.dumps(status).encode()
    size = sum(a.nbytes for a in data)
    write_all(fd, frame(head, size))
    for a in data:
        write_all(fd, a.reshape(-1).view(np.uint8))


def frame(head: bytes, size: int) -> bytes:
    """How a stream starts, either way (the cases to the child, the results back): two 8-byte
    lengths (the JSON header's, the data's), then the header; the data follows."""
    return len(head).to_bytes(8, "little") + size.to_bytes(8, "little") + head


def write_all(fd: int, data) -> None:
    view = memoryview(data)
    while len(view):
        view = view[os.write(fd, view[: 1 << 20]) :]


def _filter(program: bytes) -> None:
    """Process isolation: load the seccomp filter bwrap would have loaded (no new namespaces,
    no memfd or SysV shared memory). Best effort: a kernel without seccomp leaves it out."""
    import ctypes

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(program, len(program))
    prog = Prog(len(program) // 8, ctypes.addressof(buf))
    if libc.prctl(38, 1, 0, 0, 0) == 0:  # PR_SET_NO_NEW_PRIVS
        libc.prctl(22, 2, ctypes.byref(prog), 0, 0)  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def _read_input(fd: int, np) -> tuple[dict, dict]:
    """The spec (the source in it) and the input arrays the parent wrote to FD_IN
    (``sandbox._input_memfd``): a ``frame`` whose JSON header is the spec (each array's key,
    dtype and shape in it), then each array's bytes in the header's order."""
    with os.fdopen(fd, "rb") as f:
        blob = f.read()
    n_head = int.from_bytes(blob[:8], "little")
    spec = json.loads(blob[16 : 16 + n_head])
    data, at = {}, 16 + n_head
    for key, dtype, shape in spec.pop("arrays"):
        # read-only: each call copies its arguments
        a = np.frombuffer(blob, dtype=dtype, count=math.prod(shape), offset=at)
        data[key] = a.reshape(shape)
        at += a.nbytes
    return spec, data


# standard-library modules a submission may import under process isolation, whose uid may not
# read the interpreter's files once it runs: loaded before, where the source names them (none of
# them runs anything on import; importlib.util is the route to a forbidden module the guard names)
LATE_STDLIB = (
    "bisect", "copy", "dataclasses", "decimal", "fnmatch", "fractions", "heapq", "importlib.util",
    "pathlib", "random", "shutil", "statistics", "string", "threading", "zipfile",
)  # fmt: skip


def _preload(source: str) -> None:
    import importlib

    for name in LATE_STDLIB:
        if name.rsplit(".", 1)[-1] in source:
            importlib.import_module(name)


def main(fd_in: int, fd_out: int, site: str, drop_uid: int, late: bool = False) -> None:
    """``late`` (process isolation): NumPy and the input are read first, with the rights the
    child started with (the interpreter's files may be the grader's alone), then the uid is
    dropped and the filter loaded, all before a line of the submission runs."""
    global FILENAME
    if drop_uid and not late:
        _drop_privileges(drop_uid)
    if not late:
        os.write(fd_out, MAGIC)
    sys.path = [p for p in sys.path if p] + [site]
    import numpy as np
    import numpy.linalg  # watched for tampering below: loaded before the import hooks,
    # which would otherwise inspect each of their imports; numpy.testing too, but only where
    # the submission names it (60 ms, a third of a grading's NumPy imports)

    spec, data = _read_input(fd_in, np)
    source = spec.pop("source")
    if "testing" in source:
        import numpy.testing
    if late:
        _preload(source)
        if drop_uid:
            _drop_privileges(drop_uid)
        if spec.get("seccomp"):
            _filter(bytes.fromhex(spec["seccomp"]))
        os.write(fd_out, MAGIC)
    allowed = (
        None if spec["allowed"] is None else set(spec["allowed"]) | set(sys.stdlib_module_names)
    )
    spec["allowed_set"] = allowed
    FILENAME = spec["filename"]
    LEARNER_FILES.clear()
    LEARNER_FILES.add(FILENAME)
    if allowed is not None:
        _guard_imports(allowed)
        _watch(allowed)
    _serve_helpers(spec.get("helpers") or {}, allowed)
    env = {"__name__": "submission", "__file__": FILENAME, "__builtins__": builtins}
    watched = (np, np.linalg, builtins, *filter(None, [sys.modules.get("numpy.testing")]))
    before = _snapshot(watched)
    status = {"load_error": None, "cases": [], "tampered": [], "attempts": ATTEMPTS}
    try:
        exec(compile(source, FILENAME, "exec"), env)
    except BaseException as e:
        status["load_error"] = _failure(e, allowed)
        return _send(fd_out, status, {}, np)
    fn = env.get(spec["function"])
    if not callable(fn):
        status["load_error"] = {"missing": spec["function"]}
        return _send(fd_out, status, {}, np)
    status["cases"], arrays = _call_cases(fn, spec, data, np)
    status["tampered"] = _tampered(before, watched)
    _send(fd_out, status, arrays, np, spec)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5] == "late")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:  # no interpreter teardown (40 ms with NumPy); the submission's threads and
        os._exit(0)  # atexit handlers end here
