"""Recognisable heads, found on constructed weights whose answer is known by construction."""

import numpy as np
import pytest

from attnlab.explore.heads import HeadFinding, find_heads, shares, targets

TEXT = list("ab␣cd⏎ef␣gh⏎ij␣k")  # spaces, and two later lines


def _head(rule) -> np.ndarray:
    """A (T, T) causal head whose row t spreads its weight evenly over rule(t) (self if empty)."""
    T = len(TEXT)
    m = np.zeros((T, T))
    for t in range(T):
        keys = [s for s in rule(t) if 0 <= s <= t] or [t]
        m[t, keys] = 1 / len(keys)
    return m


def _line_start(t: int) -> list[int]:
    breaks = [s for s in range(t) if TEXT[s] == "⏎"]
    return [breaks[-1], breaks[-1] + 1] if breaks and breaks[-1] + 1 < t - 1 else []


PREVIOUS = _head(lambda t: [t - 1])
FIRST = _head(lambda t: [0])
SPACE = _head(lambda t: [s for s in range(t - 1) if TEXT[s] == "␣"])
LINE = _head(_line_start)
UNIFORM = _head(lambda t: range(t + 1))
SELF = _head(lambda t: [t])


def test_each_constructed_head_is_named_for_its_pattern_with_its_share():
    w = np.stack([[PREVIOUS, UNIFORM, FIRST], [SELF, SPACE, LINE]])  # (L=2, H=3, T, T)
    found = {(f.layer, f.head): f for f in find_heads(w, TEXT)}
    assert {k: (f.pattern, f.share) for k, f in found.items()} == {
        (0, 0): ("previous", pytest.approx(1.0)),
        (0, 2): ("first", pytest.approx(1.0)),
        (1, 1): ("space", pytest.approx(1.0)),
        (1, 2): ("line_start", pytest.approx(1.0)),
    }  # the uniform head and the self head do nothing recognisable


def test_shares_are_means_over_queries_and_chance_is_even_attention():
    half = 0.5 * PREVIOUS + 0.5 * SELF  # half its weight on the previous token
    w = np.stack([[half, UNIFORM]])
    share, chance = shares(w, TEXT, "previous")
    T = len(TEXT)
    assert share[0, 0] == pytest.approx(0.5)
    assert chance == pytest.approx(np.mean([1 / (t + 1) for t in range(2, T)]))
    assert share[0, 1] == pytest.approx(chance)  # even attention scores exactly chance
    (f,) = find_heads(w, TEXT)
    assert f == HeadFinding(0, 0, "previous", pytest.approx(0.5), pytest.approx(chance))


def test_a_weak_head_is_not_named_and_the_strongest_comes_first():
    weak = 0.3 * PREVIOUS + 0.7 * SELF
    strong = 0.9 * PREVIOUS + 0.1 * SELF
    found = find_heads(np.stack([[weak, 0.6 * PREVIOUS + 0.4 * SELF, strong]]), TEXT)
    assert [(f.head, round(f.share, 2)) for f in found] == [(2, 0.9), (1, 0.6)]


def test_targets_follow_the_text():
    assert targets(list("ab"), "previous") == [[], []]
    assert targets(list("a␣bc"), "space") == [[], [], [], [1]]  # not the key just before
    assert targets(list("ab"), "line_start") == [[], []]  # one line: nothing to point at
    with pytest.raises(ValueError, match="pattern"):
        targets(list("ab"), "vowels")
