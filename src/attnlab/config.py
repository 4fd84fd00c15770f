"""Typed configs: dataclasses built from plain dicts, where an unknown key is an error."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def from_dict(cls: type[T], d: dict[str, Any]) -> T:
    """``cls(**d)``, but a key that is not a field of ``cls`` raises a ValueError naming it."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(d) - known)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s) {unknown}; known: {sorted(known)}")
    return cls(**d)
