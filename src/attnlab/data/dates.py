"""Human-readable dates -> ISO dates: the seq2seq demonstration task, generated offline.

Each date can be written many ways ("3 March 2021", "March 3rd, 2021", "03/03/21",
"Wednesday 3 Mar 2021", "the 3rd of march 2021", "3.3.2021", "2021年3月3日", in any case);
the target is always "2021-03-03". Slashes are month-first (US) and dots day-first (European);
two-digit years mean 1950-2049. Dates are split between train, validation and test before any
text is made, so no test date is ever seen in training.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UserError

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
FIRST, LAST = dt.date(1950, 1, 1), dt.date(2049, 12, 31)


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


FORMATS: dict[str, Callable[[dt.date], str]] = {
    "d month yyyy": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",
    "month dth, yyyy": lambda d: f"{MONTHS[d.month - 1]} {ordinal(d.day)}, {d.year}",
    "month d, yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
    "mm/dd/yy": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",
    "m/d/yyyy": lambda d: f"{d.month}/{d.day}/{d.year}",
    "weekday d mon yyyy": lambda d: (
        f"{DAYS[d.weekday()]} {d.day} {MONTHS[d.month - 1][:3]} {d.year}"
    ),
    "weekday, month d, yyyy": lambda d: (
        f"{DAYS[d.weekday()]}, {MONTHS[d.month - 1]} {d.day}, {d.year}"
    ),
    "the dth of month yyyy": lambda d: f"the {ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",
    "d.m.yyyy": lambda d: f"{d.day}.{d.month}.{d.year}",
    "dd.mm.yy": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year % 100:02d}",
    "yyyy年m月d日": lambda d: f"{d.year}年{d.month}月{d.day}日",
    "d-mon-yyyy": lambda d: f"{d.day}-{MONTHS[d.month - 1][:3]}-{d.year}",
    "mon d yyyy": lambda d: f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}",
    "dd mon yy": lambda d: f"{d.day:02d} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}",
    "yyyy/mm/dd": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
}
CASES: dict[str, Callable[[str], str]] = {
    "as is": lambda s: s,
    "lower": str.lower,
    "upper": str.upper,
}

PAD, SOS, EOS = "\x00", "\x02", "\x03"
# every character any format or case can produce, plus padding; fixed so that vocabularies
# never depend on which dates were drawn
INPUT_CHARS = PAD + "".join(
    sorted(
        set(
            " ,./-0123456789年月日"
            + "".join(MONTHS + DAYS)
            + "".join(MONTHS + DAYS).upper()
            + "".join(MONTHS + DAYS).lower()
            + "stndrhof"
        )
    )
)
OUTPUT_CHARS = PAD + SOS + EOS + "-0123456789"


def render(d: dt.date, rng: random.Random) -> str:
    """One random surface form of ``d``."""
    text = rng.choice(list(FORMATS.values()))(d)
    return (
        rng.choice(list(CASES.values()))(text)
        if not text[0].isdigit() or rng.random() < 0.5
        else text
    )


@dataclass
class DateSplits:
    train: list[dt.date]
    val: list[dt.date]
    test: list[dt.date]

    @classmethod
    def make(cls, seed: int = 0, n_val: int = 1000, n_test: int = 2000) -> DateSplits:
        days = [FIRST + dt.timedelta(i) for i in range((LAST - FIRST).days + 1)]
        random.Random(seed).shuffle(days)
        return cls(days[n_val + n_test :], days[:n_val], days[n_val : n_val + n_test])


def examples(dates: list[dt.date], seed: int) -> list[tuple[str, str]]:
    """One (input, ISO target) pair per date, each in a random format (fixed by ``seed``)."""
    rng = random.Random(seed)
    return [(render(d, rng), d.isoformat()) for d in dates]


class Vocab:
    """Character <-> id for one side of the task (index 0 is padding)."""

    def __init__(self, chars: str):
        self.chars = chars
        self.index = {c: i for i, c in enumerate(chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        bad = sorted({c for c in text if c not in self.index or c == PAD})
        if bad:
            raise UserError(
                f"character(s) the model has never seen: {', '.join(repr(c) for c in bad)}"
            )
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        out = []
        for i in ids:
            c = self.chars[int(i)]
            if c == EOS:
                break
            if c not in (PAD, SOS):
                out.append(c)
        return "".join(out)
