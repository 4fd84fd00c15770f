"""The one exception type for mistakes a user can fix: the CLI prints it as one line, exit 2;
and ``closest``, the near miss such a line suggests.

It subclasses ``ValueError`` so library callers that catch bad input keep working. Anything else
that escapes a command is a bug in attnlab and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(ValueError):
    """Bad input or a refused request, described in one line that names the value."""


def closest(value: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``value`` nearly spells (for "did you mean 'lesson'?"), or None."""
    close = difflib.get_close_matches(str(value), [str(n) for n in names], n=1, cutoff=0.6)
    return close[0] if close else None
