"""Show the line: the report names the line of the learner's code where a named mistake's
values first go wrong, found by tracing the learner's function and the mistake's version."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from attnlab.grade import check
from attnlab.grade.tracer import after_divergence, locate, record

RIGHT = """import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    s = Q @ K.T / np.sqrt(Q.shape[1])
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w @ V
"""
SCORES, MASK, SOFTMAX = 5, 7, 9  # the lines of RIGHT that compute them

SLIPS = {  # mistake: (the change to RIGHT, the line it is on)
    "missing_scale": (("Q @ K.T / np.sqrt(Q.shape[1])", "Q @ K.T"), SCORES),
    "transposed_weights": (("Q @ K.T", "K @ Q.T"), SCORES),
    "mask_fill_zero": (("-np.inf)", "0.0)"), MASK),
    "softmax_axis": (("e / e.sum(axis=1", "e / e.sum(axis=0"), SOFTMAX),
    "reshape_not_transpose": (("K.T", "K.reshape(K.shape[1], K.shape[0])"), SCORES),
}


def _load(tmp_path, source: str, name: str = "scaled_dot_product_attention"):
    path = tmp_path / f"{abs(hash(source))}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.mark.parametrize("mistake", SLIPS)
def test_the_line_named_is_the_line_changed(tmp_path, mistake):
    (old, new), line = SLIPS[mistake]
    r = check(_load(tmp_path, RIGHT.replace(old, new, 1)), seed=0)
    assert r.mistakes[0] == mistake
    assert r.lines[mistake] == [line]
    shown = str(r)
    assert f"line {line}, where its values first go wrong:" in shown
    assert RIGHT.replace(old, new, 1).splitlines()[line - 1].strip() in shown
    assert json.loads(json.dumps(r.to_dict()))["lines"] == {mistake: [line]}


def test_two_mistakes_get_a_line_each(tmp_path):
    source = RIGHT.replace("Q @ K.T / np.sqrt(Q.shape[1])", "Q @ K.T").replace(
        "e / e.sum(axis=1", "e / e.sum(axis=0"
    )
    r = check(_load(tmp_path, source), seed=0, lang="ja")
    assert set(r.mistakes) == {"missing_scale", "softmax_axis"}
    assert r.lines == {"missing_scale": [SCORES], "softmax_axis": [SOFTMAX]}
    assert f"{SOFTMAX} 行目" in str(r)


def test_no_version_no_line(tmp_path):
    """A right answer, and a mistake named by a check of the grader's (stored answers), show
    no line."""
    assert check(_load(tmp_path, RIGHT), seed=0).lines == {}


def test_record_keeps_what_each_line_made():
    """After each line, the arrays it made or changed, in place too, at that line's number."""

    def f(x):
        y = x * 2  # +1
        y[0] = 7.0  # +2: in place
        z = y  # +3: the same array under another name
        return z.sum()

    first = f.__code__.co_firstlineno
    _, events = record(f, (np.ones(3),), {}, {f.__code__.co_filename})
    seen = [(e.line - first, e.name) for e in events]
    # what each line made (the arguments of the call traced are its inputs, not events)
    assert seen == [(1, "y"), (2, "y"), (3, "z")], seen
    assert np.array_equal(events[-1].value, [7.0, 2.0, 2.0])


def test_divergence_and_locate():
    from attnlab.grade.tracer import Event

    a, b, c, k = np.zeros(2), np.ones(2), np.full(2, 2.0), np.full(2, 5.0)
    right = [Event(1, "k", k), Event(2, "s", b)]
    wrong = [Event(1, "k", k), Event(2, "s", a), Event(3, "w", c)]  # parts at line 2
    values = after_divergence(right, wrong)
    assert [v.value.tolist() for v in values] == [a.tolist(), c.tolist()]
    learner = [Event(9, "k", k), Event(10, "q", b), Event(11, "t", a), Event(12, "u", c)]
    assert locate(learner, values) == 11
    assert locate(learner[:1], values) is None
    # equal numbers under two names: a K the right computation holds as K names no line; the
    # learner's s, holding the version's s, does
    assert locate([Event(5, "K", a), Event(6, "s", a)], values, [Event(1, "K", a)]) == 6
    assert locate([Event(5, "K", a), Event(6, "s", a)], values) == 5


@pytest.mark.parametrize("isolation", ["process", "auto"])
def test_the_sandboxed_grader_shows_the_line_too(isolation):
    """``attnlab grade``: the child traces the cases and the parent names the line from what
    it sent back (the same lines as in-process)."""
    from attnlab.grade import grade_source

    source = RIGHT.replace("e / e.sum(axis=1", "e / e.sum(axis=0")
    r = grade_source(source, "scaled_dot_product_attention", seed=0, isolation=isolation)
    assert r.mistakes == ["softmax_axis"] and r.lines == {"softmax_axis": [SOFTMAX]}
    assert "w = e / e.sum(axis=0, keepdims=True)" in str(r)


def _stream(entries, data: bytes, status: dict) -> bytes:
    head = json.dumps({**status, "arrays": entries}).encode()
    return len(head).to_bytes(8, "little") + len(data).to_bytes(8, "little") + head + data


def test_a_forged_trace_is_bounded_before_it_is_read():
    """Traced values are untrusted: only traced cases may send them, at most MAX_EVENTS of at
    most MAX_CELLS cells each, declared before a byte is read."""
    from attnlab.grade import stream
    from attnlab.grade.tracer import MAX_CELLS, MAX_EVENTS

    layout = stream.Layout([[(2,)]], [[]], [True])
    ok = np.arange(4.0)
    body = _stream([["t0_0", "<f8", [4]]], ok.tobytes(), {})
    _, arrays = stream.read(body, layout)
    assert np.array_equal(arrays["t0_0"], ok)
    too_big = _stream([["t0_0", "<f8", [MAX_CELLS + 1]]], b"\0" * 8 * (MAX_CELLS + 1), {})
    with pytest.raises(stream.Malformed, match="traced value"):
        stream.read(too_big, layout)
    beyond = _stream([[f"t0_{MAX_EVENTS}", "<f8", [1]]], b"\0" * 8, {})
    with pytest.raises(stream.Malformed, match="unknown"):
        stream.read(beyond, layout)
    untraced = stream.Layout([[(2,)]], [[]], [False])
    with pytest.raises(stream.Malformed, match="unknown"):
        stream.read(_stream([["t0_0", "<f8", [1]]], b"\0" * 8, {}), untraced)
    with pytest.raises(stream.Malformed, match="trace"):
        stream.checked_status({"cases": [{"n": 1, "trace": [["x", 1]]}]}, 1)


def test_an_integer_buffer_and_a_half_precision_cast_are_shown_where_they_start(tmp_path):
    buffer = RIGHT.replace(
        "    return w @ V",
        "    out = np.zeros((Q.shape[0], V.shape[1]), dtype=int)\n    out[:] = w @ V\n    return out",
    )
    r = check(_load(tmp_path, buffer), seed=0)
    assert r.mistakes[0] == "wrong_dtype" and r.lines["wrong_dtype"] == [10]
    half = RIGHT.replace(
        "    s = Q @ K.T",
        "    Q, K, V = Q.astype(np.float16), K.astype(np.float16), V.astype(np.float16)\n    s = Q @ K.T",
    )
    r = check(_load(tmp_path, half), seed=0)
    assert r.mistakes[0] == "low_precision" and r.lines["low_precision"] == [5]


def test_a_long_loop_sends_no_more_values_than_the_parent_reads():
    """A loop of many lines (and returns) stops at MAX_EVENTS, so a right loop-style answer is
    never 'malformed results'."""
    from attnlab.grade import grade_file
    from attnlab.grade.tracer import MAX_EVENTS

    def f(x):
        for _ in range(3 * MAX_EVENTS):
            x = x + 1.0
        return x, x

    _, events = record(f, (np.zeros(2),), {}, {f.__code__.co_filename})
    assert len(events) == MAX_EVENTS
    corpus = __import__("pathlib").Path(__file__).parent / "submissions"
    r = grade_file(corpus / "self_attention__pass__loops.py", isolation="process")
    assert r.passed, r.checks
