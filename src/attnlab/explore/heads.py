"""Heads that do something recognisable, found from a GPT's attention weights on one text.

For each head and each *pattern* we measure the head's **share**: the mean, over the queries
where the pattern is defined, of the weight the query puts on the pattern's keys. Beside it
the **chance** share: what a head spreading its weight evenly over the keys it may see (t + 1
of them, causal) would put there. A head is reported when its share is at least ``MIN_SHARE``
and at least ``LIFT`` times chance.

Patterns (query t, keys s <= t; tokens as the page shows them, so "␣" is a space, "⏎" a line
break):
- ``previous``: the key just before the query (t - 1), for t >= 2
- ``first``: the text's first character (s = 0), for t >= 2 (at t = 1 it is also the previous)
- ``space``: the spaces before the query, for queries with a space before t - 1
- ``line_start``: the line break that opened the query's line and the line's first character,
  for queries on a later line at least two characters in
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PATTERNS = ("previous", "first", "space", "line_start")
MIN_SHARE = 0.4
LIFT = 2.0
PER_PATTERN = 2  # at most this many heads named per pattern, the strongest first
SPACES = {" ", "␣"}
BREAKS = {"\n", "⏎"}


@dataclass(frozen=True)
class HeadFinding:
    layer: int
    head: int
    pattern: str
    share: float  # mean weight on the pattern's keys
    chance: float  # the same for even attention over the visible keys

    def to_json(self) -> dict:
        return {
            "layer": self.layer,
            "head": self.head,
            "pattern": self.pattern,
            "share": round(self.share, 4),
            "chance": round(self.chance, 4),
        }


def targets(tokens: list[str], pattern: str) -> list[list[int]]:
    """For each query position, the key positions ``pattern`` points at (empty: not counted)."""
    out: list[list[int]] = []
    line_break = -1  # the last line break seen before the query
    for t in range(len(tokens)):
        if pattern == "previous":
            keys = [t - 1] if t >= 2 else []
        elif pattern == "first":
            keys = [0] if t >= 2 else []
        elif pattern == "space":
            keys = [s for s in range(t - 1) if tokens[s] in SPACES]
        elif pattern == "line_start":
            keys = [s for s in (line_break, line_break + 1) if line_break >= 0 and s < t - 1]
            keys = keys if len(keys) == 2 else []
        else:
            raise ValueError(f"unknown pattern {pattern!r}; expected one of {PATTERNS}")
        out.append(keys)
        if tokens[t] in BREAKS:
            line_break = t
    return out


def shares(weights: np.ndarray, tokens: list[str], pattern: str) -> tuple[np.ndarray, float]:
    """Each head's share of weight on ``pattern`` (L, H), and the chance share (a number);
    NaN shares where the text has no query the pattern applies to."""
    L, H = weights.shape[:2]
    rows = [(t, keys) for t, keys in enumerate(targets(tokens, pattern)) if keys]
    if not rows:
        return np.full((L, H), np.nan), float("nan")
    share = np.mean([weights[:, :, t, keys].sum(-1) for t, keys in rows], axis=0)  # (L, H)
    chance = float(np.mean([len(keys) / (t + 1) for t, keys in rows]))
    return share, chance


def find_heads(weights: np.ndarray, tokens: list[str]) -> list[HeadFinding]:
    """The recognisable heads in causal ``weights`` (L, H, T, T) on ``tokens``, per pattern
    the strongest first."""
    weights = np.asarray(weights, dtype=np.float64)
    found = []
    for pattern in PATTERNS:
        share, chance = shares(weights, tokens, pattern)
        if np.isnan(chance):
            continue
        ok = (share >= MIN_SHARE) & (share >= LIFT * chance)
        ranked = sorted(zip(*np.nonzero(ok), strict=True), key=lambda lh: -share[lh])
        found += [
            HeadFinding(int(la), int(h), pattern, float(share[la, h]), chance)
            for la, h in ranked[:PER_PATTERN]
        ]
    return found


__all__ = ["PATTERNS", "HeadFinding", "find_heads", "shares", "targets"]
