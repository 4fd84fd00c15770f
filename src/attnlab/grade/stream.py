"""The child's result stream, read as untrusted input: every size is bounded before it is used.

The child (``_child.py``) sends two 8-byte lengths (header, data), a JSON header, then raw array
bytes. The parent knows, before reading anything, the shape of every answer part and every input
it may receive (``Layout``), hence the most bytes a well-formed stream can hold. A stream that
declares more, claims a dtype that is not a plain number or bool, names an array the exercise
does not have, or whose data length does not add up is ``Malformed``: the submission's failure
(a ``crash`` verdict naming what was wrong), never an internal grader error and never a large
allocation. An answer of the wrong shape is still read (and judged as one) up to ``room``: 16
times the expected size; beyond that it is refused unread.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from ._child import PLAIN_DTYPES, room
from .tracer import MAX_CELLS, MAX_EVENTS

HEADER_BASE = 256 * 2**10  # bytes of JSON header allowed, plus HEADER_PER_CASE per case
HEADER_PER_CASE = 64 * 2**10
TEXT_MAX = 32 * 2**10  # characters of any one string kept from the header
MAX_DIMS = 32
MAX_ELEMENTS = 2**48  # a declared shape larger than this is nonsense (and math.prod stays cheap)


class Malformed(ValueError):
    """The stream is not what a well-behaved child sends: the submission's failure."""


class Incomplete(ValueError):
    """The stream stopped before its declared end: the child died while sending."""


Shape = tuple[int, ...]


@dataclass(frozen=True)
class Layout:
    """What the parent may receive: per case, the expected shape of each answer part, and the
    shape of each input (sent back to detect mutation)."""

    expect: list[list[Shape]]
    inputs: list[list[Shape]]
    traced: list[bool] | None = None  # per case: may it send a line-by-line trace (tracer.py)

    def trace_slots(self) -> int:
        return sum(self.traced or []) * MAX_EVENTS

    def trace_key(self, key: object) -> bool:
        """Whether ``key`` names one of the values a traced case may send ("t{case}_{k}")."""
        if not (isinstance(key, str) and key[:1] == "t" and key[1:].count("_") == 1):
            return False
        i, k = key[1:].split("_")
        if not (i.isdigit() and k.isdigit() and len(i) < 7 and len(k) < 7):
            return False
        return int(i) < len(self.traced or []) and self.traced[int(i)] and int(k) < MAX_EVENTS

    def shapes(self) -> dict[str, Shape]:
        """Every key the child may send, with the shape whose bytes the parent reads."""
        out = {}
        for i, (exp, inp) in enumerate(zip(self.expect, self.inputs, strict=True)):
            out |= {f"r{i}_{j}": tuple(s) for j, s in enumerate(exp)}
            out |= {f"a{i}_{j}": tuple(s) for j, s in enumerate(inp)}
        return out

    def header_cap(self) -> int:
        return HEADER_BASE + HEADER_PER_CASE * len(self.expect)

    def data_cap(self) -> int:
        """Bytes of data at most: every array at its room, at the widest plain dtype (8 bytes)."""
        return 8 * (sum(room(s) for s in self.shapes().values()) + self.trace_slots() * MAX_CELLS)

    def stream_cap(self) -> int:
        return 16 + self.header_cap() + self.data_cap()


def read(body: bytes, layout: Layout) -> tuple[dict, dict[str, np.ndarray]]:
    """The checked status and arrays of a stream (after the start marker)."""
    if len(body) < 16:
        raise Incomplete("no header")
    head_len = int.from_bytes(body[:8], "little")
    data_len = int.from_bytes(body[8:16], "little")
    if head_len > layout.header_cap():
        raise Malformed(f"a header of {head_len} bytes, more than {layout.header_cap()}")
    if data_len > layout.data_cap():
        raise Malformed(f"{data_len} bytes of arrays, more than the {layout.data_cap()} expected")
    if len(body) != 16 + head_len + data_len:
        raise Incomplete(f"{len(body) - 16} of {head_len + data_len} bytes")
    try:
        status = json.loads(body[16 : 16 + head_len].decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise Malformed(f"a header that is not JSON ({type(e).__name__})") from None
    if not isinstance(status, dict):
        raise Malformed("a header that is not a JSON object")
    arrays = _arrays(status.pop("arrays", []), layout, memoryview(body)[16 + head_len :])
    return status, arrays


def _shape(value: object) -> Shape:
    if not isinstance(value, list) or len(value) > MAX_DIMS:
        raise Malformed(f"a shape that is not a list of at most {MAX_DIMS} sizes")
    if not all(type(d) is int and 0 <= d < 2**31 for d in value):
        raise Malformed("a shape with a size that is not a count")
    if math.prod(value) > MAX_ELEMENTS:
        raise Malformed(f"a shape of {math.prod(value)} elements")
    return tuple(value)


def _arrays(entries: object, layout: Layout, data: memoryview) -> dict[str, np.ndarray]:
    """Each declared array, read only when its size fits the room its expected shape allows;
    the data must be exactly the sum of the arrays declared."""
    allowed = layout.shapes()
    most = len(allowed) + layout.trace_slots()
    if not isinstance(entries, list) or len(entries) > most:
        raise Malformed(f"more arrays than the {most} this exercise has")
    out: dict[str, np.ndarray] = {}
    at = 0
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3):
            raise Malformed("an array entry that is not [key, dtype, shape]")
        key, dtype, shape = entry[0], entry[1], _shape(entry[2])
        traced = layout.trace_key(key)
        if (key not in allowed and not traced) or key in out:
            raise Malformed(f"an array named {str(key)[:40]!r}, unknown or repeated")
        if dtype not in PLAIN_DTYPES:
            raise Malformed(f"an array of dtype {str(dtype)[:40]!r}, not a plain number or bool")
        if traced and math.prod(shape) > MAX_CELLS:
            raise Malformed(f"a traced value of shape {shape}, more than {MAX_CELLS} cells")
        if not traced and math.prod(shape) > room(allowed[key]):
            what = "an answer" if key[0] == "r" else "an input"
            raise Malformed(
                f"{what} of shape {shape} in case {key[1:].split('_')[0]}, far larger than "
                f"the expected {allowed[key]}"
            )
        dt = np.dtype(dtype)
        size = math.prod(shape) * dt.itemsize
        if at + size > len(data):
            raise Malformed("less data than its arrays declare")
        out[key] = np.frombuffer(data[at : at + size], dtype=dt).reshape(shape).copy()
        at += size
    if at != len(data):
        raise Malformed(f"{len(data) - at} bytes of data beyond its arrays")
    return out


def text(value: object, what: str) -> str:
    """A string from the header, capped (what was cut is said)."""
    if not isinstance(value, str):
        raise Malformed(f"{what} that is not text")
    if len(value) > TEXT_MAX:
        cut = len(value) - TEXT_MAX
        return (
            value[: TEXT_MAX // 2] + f"\n... ({cut} characters cut) ...\n" + value[-TEXT_MAX // 2 :]
        )
    return value


def optional_text(value: object, what: str) -> str | None:
    return None if value is None else text(value, what)


def checked_status(status: dict, n_cases: int) -> dict:
    """The status with every field of the type the parent uses, or ``Malformed``."""
    load_error = status.get("load_error")
    if load_error is not None and not isinstance(load_error, dict):
        raise Malformed("a load error that is not an object")
    if load_error is not None:
        load_error = {
            k: optional_text(load_error.get(k), k) for k in ("forbidden", "missing", "traceback")
        }
    cases = status.get("cases")
    if not isinstance(cases, list) or (load_error is None and len(cases) != n_cases):
        n = len(cases) if isinstance(cases, list) else "no"
        raise Malformed(f"{n} results for {n_cases} cases")
    return {
        "load_error": load_error,
        "cases": [_case(c) for c in cases] if load_error is None else [],
        "tampered": _texts(status.get("tampered", []), 20, "tampered names"),
        "attempts": _texts(status.get("attempts", []), 10, "attempts"),
    }


def _texts(value: object, most: int, what: str) -> list[str]:
    if not isinstance(value, list):
        raise Malformed(f"{what} that are not a list")
    return [text(v, what)[:200] for v in value[:most]]


def _case(entry: object) -> dict:
    if not isinstance(entry, dict):
        raise Malformed("a case result that is not an object")
    n = entry.get("n")
    if type(n) is not int or not 0 <= n < 2**31:
        raise Malformed("a number of parts that is not a count")
    error = entry.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise Malformed("an error that is not an object")
        error = {
            "traceback": text(error.get("traceback"), "a traceback"),
            "forbidden": optional_text(error.get("forbidden"), "a module name"),
        }
    types = entry.get("types")
    return {
        "n": n,
        "error": error,
        "kind": optional_text(entry.get("kind"), "a type name"),
        "types": None if types is None else _texts(types, 64, "types"),
        "trace": _trace(entry.get("trace", [])),
    }


def _trace(value: object) -> list[tuple[int, str]]:
    """A traced case's (line, name) per value, at most ``MAX_EVENTS``."""
    if not isinstance(value, list) or len(value) > MAX_EVENTS:
        raise Malformed(f"a trace that is not a list of at most {MAX_EVENTS} entries")
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int):
            raise Malformed("a trace entry that is not [line, name]")
        out.append((item[0], text(item[1], "a variable name")[:64]))
    return out
