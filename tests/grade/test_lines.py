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


# Learner-style files with one known wrong line (written for these tests), each beside its right
# form: the line named is the one given, and the right form gets no line.
CASES = {
    # the mask step left out: no line of its own, so the first line that uses the unmasked
    # scores is named (README, "Show the line")
    "mask_ignored": (
        "scaled_dot_product_attention",
        """import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=1, keepdims=True)
    return w @ V
""",
        (
            "    scores = scores -",
            "    if mask:\n        scores = np.where(np.tril(np.ones(scores.shape, bool)), scores, -np.inf)"
            "\n    scores = scores -",
        ),
        6,
    ),
    # a mask of hidden keys built upside down (-1e9 where -inf is meant: the same in effect)
    "mask_orientation": (
        "self_attention",
        """import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        hidden = np.tril(np.ones(s.shape, dtype=bool), k=-1)
        s = np.where(hidden, -1e9, s)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w @ V, w
""",
        (
            "np.tril(np.ones(s.shape, dtype=bool), k=-1)",
            "np.triu(np.ones(s.shape, dtype=bool), k=1)",
        ),
        8,
    ),
    # built upside down and negated later: the value is the version's mask negated
    "mask_diagonal_excluded": (
        "causal_mask",
        """import numpy as np


def causal_mask(T):
    hidden = np.triu(np.ones((T, T), dtype=bool), k=0)
    allowed = ~hidden
    return allowed
""",
        ("k=0", "k=1"),
        5,
    ),
    # a loop that keeps its scores in a Python list
    "missing_tanh": (
        "additive_attention",
        """import math
import numpy as np


def additive_attention(query, keys, W_q, W_k, v):
    q = query @ W_q
    scores = [float(v @ (q + k @ W_k)) for k in keys]
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    weights = np.array([x / sum(e) for x in e])
    return weights @ keys, weights
""",
        ("v @ (q + k @ W_k)", "v @ np.tanh(q + k @ W_k)"),
        7,
    ),
    # V made from W_K by a cast of the inputs: the local named W_V holds W_K
    "wrong_value_projection": (
        "self_attention",
        """import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    X, W_Q, W_K, W_V = (a.astype(np.float32) for a in (X, W_Q, W_K, W_K))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / np.sqrt(np.float32(K.shape[1]))
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w @ V, w
""",
        ("(X, W_Q, W_K, W_K)", "(X, W_Q, W_K, W_V)"),
        5,
    ),
    # an array of zeros filled in a part at a time: the part that goes wrong
    "pe_one_function": (
        "positional_encoding",
        """import numpy as np


def positional_encoding(T, d):
    angle = np.arange(T)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
""",
        ("pe[:, 0::2] = np.cos", "pe[:, 0::2] = np.sin"),
        7,
    ),
}


@pytest.mark.parametrize("mistake", CASES)
def test_learner_style_lines(tmp_path, mistake):
    exercise, wrong, (old, new), line = CASES[mistake]
    r = check(_load(tmp_path, wrong, exercise), seed=0)
    assert r.mistakes[0] == mistake, r.mistakes
    assert r.lines[mistake] == [line], (r.lines, wrong.splitlines()[line - 1])
    right = check(_load(tmp_path, wrong.replace(old, new, 1), exercise), seed=0)
    assert right.passed and right.lines == {}


def test_a_mask_left_out_says_so_in_each_language(tmp_path):
    exercise, wrong, _, line = CASES["mask_ignored"]
    fn = _load(tmp_path, wrong, exercise)
    said = {
        "en": f"line {line}: the scores reach this line without the mask",
        "ja": f"{line} 行目：スコアがマスクを通らないまま",
        "zh": f"第 {line} 行：分数没有先经过掩码",
    }
    for lang, words in said.items():
        shown = str(check(fn, seed=0, lang=lang))
        assert words in shown and "scores = scores - scores.max(" in shown, shown
    assert "where its values first go wrong" not in str(check(fn, seed=0))


def test_lists_are_recorded_as_arrays_and_calls_at_the_callers_line():
    """A list of floats, and of arrays of one shape, is a value; a list of integers (a shape) is
    not; a helper's arguments are values of the line that calls it."""

    def helper(x):
        return x * 2.0

    def f(x):
        row = [float(v) + 0.5 for v in x]  # +1
        rows = [x, x + 1.0]  # +2
        shape = [2, 3]  # +3: no value
        y = helper(x)  # +4
        return row, rows, shape, y

    first = f.__code__.co_firstlineno
    files = {f.__code__.co_filename}
    _, events = record(f, (np.arange(3.0),), {}, files)
    made = {(e.line - first, e.name): e.value for e in events}
    assert np.array_equal(made[1, "row"], [0.5, 1.5, 2.5])
    assert made[2, "rows"].shape == (2, 3)
    assert not any(name == "shape" for _, name in made)
    assert np.array_equal(made[4, "x"], np.arange(3.0))  # the helper's argument, at line +4
    assert np.array_equal(made[4, "y"], np.arange(3.0) * 2)
    # a list longer than MAX_CELLS is not read
    from attnlab.grade.tracer import MAX_CELLS

    def g():
        big = [0.5] * (MAX_CELLS + 1)
        return len(big)

    assert record(g, (), {}, {g.__code__.co_filename})[1] == []


def test_a_step_left_out_is_named_where_its_value_is_next_used():
    from attnlab.grade.tracer import Event

    s, masked, e_wrong, m = (
        np.ones((2, 2)),
        np.array([[1.0, -np.inf], [1, 1]]),
        np.array([[0.3, 0.7], [0.5, 0.5]]),
        np.eye(2) > 0,
    )
    right = [  # scores, the mask, the masked scores, passed to the softmax, its exponentials
        Event(1, "s", s),
        Event(2, "m", m),
        Event(3, "s", masked),
        Event(4, "s", masked),
        Event(5, "e", np.zeros((2, 2))),
    ]
    wrong = [Event(1, "s", s), Event(4, "s", s), Event(5, "e", e_wrong)]  # never masked
    values = after_divergence(right, wrong)
    assert values[0].skipped and np.array_equal(values[0].value, s)
    learner = [Event(10, "scores", s), Event(11, "allowed", m), Event(12, "p", e_wrong)]
    # the scores line is right; the mask built and never applied is passed over
    assert locate(learner, values, right, next_use=True) == 12
    assert locate(learner, values, right) == 10  # without next_use: the line that holds it
    # -1e9 and -inf act the same: a learner's -1e9 mask holds the version's -inf one
    learner = [Event(5, "s", np.where(np.isinf(masked), -1e9, masked))]
    assert locate(learner, [Event(3, "s", masked)], right) == 5


FILLS = {  # the accepted ways to mask: the learner's choice, never a mistake
    "-inf": ("-np.inf)", "-np.inf)"),
    "-1e9": ("-np.inf)", "-1e9)"),
    "add": (
        "s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)",
        "s = s + np.where(np.tril(np.ones(s.shape, dtype=bool)), 0.0, -1e9)",
    ),
}
AXIS_SLIPS = {  # the softmax over the queries' axis: both steps, or one of them
    "both": ("(axis=1", "(axis=0"),
    "sum": ("e / e.sum(axis=1", "e / e.sum(axis=0"),
    "max": ("s.max(axis=1", "s.max(axis=0"),
}


@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("slip", AXIS_SLIPS)
def test_the_softmax_axis_is_named_whichever_way_the_scores_are_masked(tmp_path, fill, slip):
    # with more keys than queries some columns are masked throughout: there -inf gives NaN,
    # -1e9 an even spread and an added -1e9 the unmasked column, so each fill has versions
    source = RIGHT.replace(*FILLS[fill]).replace(*AXIS_SLIPS[slip])
    assert source != RIGHT.replace(*FILLS[fill])
    r = check(_load(tmp_path, source), seed=0)
    assert r.mistakes == ["softmax_axis"], str(r)[-800:]
    assert check(_load(tmp_path, RIGHT.replace(*FILLS[fill])), seed=0).passed
