"""A date through a trained seq2seq model: the ISO answer, its alignment, how far to trust it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import torch

from ..errors import UserError
from ..models import Seq2Seq
from .date_task import ISO_LEN, SRC, decode

LOW_CONFIDENCE = 0.9  # below this, the weakest character of an answer is flagged


@dataclass
class Translation:
    """An answer of the date model, with how much to trust it."""

    text: str  # what the model wrote, e.g. "2018-05-09"
    weights: torch.Tensor | None  # (len(text), len(input)) alignment, None without attention
    char_probs: list[float]  # the probability the model gave each character it wrote
    problem: str | None  # why the answer is not a real ISO date, if it is not

    @property
    def confidence(self) -> float:
        """The weakest character's probability: one unsure digit makes an unsure date."""
        return min(self.char_probs) if self.char_probs else 0.0

    @property
    def low_confidence(self) -> bool:
        return self.confidence < LOW_CONFIDENCE

    def verdict(self) -> str:
        """One line: the answer, its confidence, and a mark if it is invalid or unsure."""
        line = f"{self.text}  (confidence {self.confidence:.3f})"
        if self.problem:
            return f"{line}  INVALID: {self.problem}"
        if self.low_confidence:
            return f"{line}  UNSURE: below {LOW_CONFIDENCE}; the input may not be a date"
        return line


def iso_problem(text: str) -> str | None:
    """Why ``text`` is not a valid ISO date (YYYY-MM-DD), or None if it is one."""
    if len(text) != ISO_LEN or text[4] != "-" or text[7] != "-":
        return f"not of the form YYYY-MM-DD ({text!r})"
    try:
        dt.date.fromisoformat(text)
    except ValueError as e:
        return str(e)
    return None


def translate(model: Seq2Seq, text: str) -> Translation:
    """The ISO date for ``text``, with the alignment and the model's confidence."""
    if not text.strip():
        raise UserError("nothing to translate: the input is empty or only spaces")
    bad = sorted({c for c in text if c not in SRC.index})
    if bad:
        raise UserError(f"characters the date model has never seen: {''.join(bad)!r}")
    out, weights, char_probs = decode(model, text)
    return Translation(out, weights, char_probs, iso_problem(out))
