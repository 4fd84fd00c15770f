"""Typed configs: dataclasses built from plain dicts, where an unknown key is an error."""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any, TypeVar

from .errors import UserError

T = TypeVar("T")


def from_dict(cls: type[T], d: dict[str, Any]) -> T:
    """``cls(**d)``, but a key that is not a field of ``cls`` raises a ValueError naming it."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(d) - known)
    if unknown:
        raise UserError(f"unknown {cls.__name__} field(s) {unknown}; known: {sorted(known)}")
    return cls(**d)


def field_types(cls: type) -> dict[str, str]:
    """Field name -> its annotation as written (``"int"``, ``"float | None"``, ...)."""
    return {f.name: str(f.type) for f in fields(cls)}


def parse_value(key: str, raw: str, annotation: str) -> Any:
    """``raw`` (text from ``--set key=raw``) as the field's type, or a UserError naming both."""
    kinds = [k.strip() for k in annotation.split("|")]
    if "None" in kinds and raw.lower() in ("none", "null"):
        return None
    for kind in kinds:
        value = _as(kind, raw)
        if value is not _NO:
            return value
    raise UserError(f"--set {key}={raw}: expected {' or '.join(kinds)}")


_NO = object()


def _as(kind: str, raw: str) -> Any:
    try:
        if kind == "bool":
            return {"true": True, "false": False, "1": True, "0": False}.get(raw.lower(), _NO)
        if kind == "int":
            return int(raw)
        if kind == "float":
            value = float(raw)
            return value if math.isfinite(value) else _NO
        if kind == "str":
            return raw
    except ValueError:
        return _NO
    try:  # anything else (dicts, lists): JSON
        return json.loads(raw)
    except json.JSONDecodeError:
        return _NO
