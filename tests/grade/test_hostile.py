"""Hostile files and folders a learner could hand in, each asserting what the grader and the
teacher see. (The sandbox's own walls are tested in test_isolation.py.)

Forged result streams: the submission writes the result pipe itself (its number is in
``sys.argv``; the harness's frame holds the spec) and exits. The parent must bound what it
reads from the exercise's own shapes, before allocating: every forgery is the learner's
``crash`` verdict, never GRADER ERROR, never a hang, never a large allocation.
"""

from __future__ import annotations

import resource
import textwrap
from pathlib import Path

import pytest

from attnlab.grade import grade_source, report

CORPUS = Path(__file__).parent / "submissions"
RIGHT = (CORPUS / "self_attention__pass__vectorized.py").read_text()

FORGE = """
import io, json, os, sys, zipfile
import numpy as np

def _spec():
    f = sys._getframe(1)
    while "spec" not in f.f_locals:
        f = f.f_back
    return f.f_locals["spec"]

def _send(head: bytes, data: bytes = b"", head_len=None, data_len=None):
    fd = int(sys.argv[2])
    n, d = len(head) if head_len is None else head_len, len(data) if data_len is None else data_len
    os.write(fd, n.to_bytes(8, "little") + d.to_bytes(8, "little") + head + data)
    os._exit(0)

def _status(cases, arrays=()):
    return json.dumps({"load_error": None, "cases": cases, "tampered": [], "attempts": [],
                       "arrays": list(arrays)}).encode()

def self_attention(X, W_Q, W_K, W_V, mask=False):
    spec = _spec()
    n = len(spec["cases"])
    ok = {"error": None, "kind": "tuple", "n": 2, "types": ["a", "b"]}
"""


def forged(body: str, **kw):
    """Grade a submission whose function forges the result stream with ``body``."""
    source = FORGE + textwrap.indent(textwrap.dedent(body), "    ")
    kw.setdefault("isolation", "process")
    kw.setdefault("timeout", 5)
    return grade_source(source, "self_attention", seed=3, **kw)


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


ATTACKS = {
    # a deflated .npz member that would inflate to 1.5 GiB: the old format, now not even read
    "zip_bomb": """
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("r0_0.npy", b"\\0" * (64 << 20))
        os.write(int(sys.argv[2]), len(buf.getvalue()).to_bytes(8, "little") + buf.getvalue())
        os._exit(0)
    """,
    "thirty_million_parts": """
        _send(_status([{**ok, "n": 30_000_000}] * n))
    """,
    "structured_dtype": """
        _send(_status([ok] * n, [["r0_0", "|V16", [1]]]), b"\\0" * 16)
    """,
    "object_dtype": """
        _send(_status([ok] * n, [["r0_0", "|O", [1]]]), b"\\0" * 8)
    """,
    "huge_declared_header": """
        _send(b"{}", head_len=1 << 40)
    """,
    "huge_declared_data": """
        _send(_status([ok] * n), data_len=1 << 40)
    """,
    "data_past_the_arrays": """
        _send(_status([ok] * n), b"\\0" * 4096)
    """,
    "unknown_array": """
        _send(_status([ok] * n, [["x9_9", "<f8", [1]]]), b"\\0" * 8)
    """,
    "deep_json": """
        _send(b"[" * 100_000 + b"]" * 100_000)
    """,
    "wrong_field_types": """
        _send(_status([{"error": 5, "kind": [], "n": "many", "types": 7}] * n))
    """,
    "fewer_cases": """
        _send(_status([ok]))
    """,
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_forged_result_stream_is_the_learners_crash(attack):
    before = _max_rss_mib()
    r = forged(ATTACKS[attack])
    assert r.error is None, r.error  # never GRADER ERROR
    assert r.mistakes == ["crash"] and not r.passed, (r.mistakes, report.text(r))
    assert not any(c.name == "finishes in time" for c in r.checks)  # no hang
    assert "malformed" in report.text(r) or "exit code" in report.text(r)
    assert _max_rss_mib() - before < 64  # nothing near the sizes the stream claimed


def test_a_huge_declared_answer_is_refused_unread_and_a_small_wrong_shape_is_judged():
    """An answer that claims a 2^20 x 2^20 weights matrix: no byte of it is read; the report
    names the shape. A wrong shape of ordinary size is still judged as a wrong shape."""
    r = forged(
        """
        arrays = [[f"r{i}_{j}", "<f8", [1 << 20, 1 << 20]] for i in range(n) for j in (0, 1)]
        _send(_status([ok] * n, arrays))
        """
    )
    assert r.error is None and r.mistakes == ["crash"], report.text(r)
    assert "(1048576, 1048576)" in report.text(r) and "far larger" in report.text(r)
    transposed = RIGHT + textwrap.dedent(
        """
        _right = self_attention
        def self_attention(*a, **k):
            out, w = _right(*a, **k)
            return out.T, w
        """
    )
    r = grade_source(transposed, "self_attention", seed=3, isolation="process")
    assert r.mistakes[0] == "wrong_return" and "has shape" in report.text(r)


def test_a_megabyte_exception_message_is_cut_in_the_report():
    src = "def self_attention(*a, **k):\n    raise ValueError('A' * (1 << 20))\n"
    r = grade_source(src, "self_attention", seed=3, isolation="process")
    assert r.mistakes == ["crash"]
    body = report.render([r], "json")
    assert len(body) < 200_000 and "characters cut" in body
    assert len(report.render([r], "text")) < 100_000
