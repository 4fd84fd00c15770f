"""Load the function a user names: ``path/to/file.py:function`` or ``package.module:function``.

Loading runs the user's own module (their code, on their machine, as ``attnlab.grade.check``
does). Anything that goes wrong is one ``UserError`` line naming the target.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from ..errors import UserError

FORM = "expected path/to/file.py:function or package.module:function"


def _module_from_file(path: Path, target: str):
    if not path.is_file():
        raise UserError(f"cannot load target {target!r}: no file {str(path)!r}")
    name = f"attnlab_conform_target_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"cannot load target {target!r}: {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    sys.path.insert(0, str(path.resolve().parent))  # the file may import its neighbours
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.resolve().parent))
    return module


def load_target(target: str) -> Callable:
    """The callable ``target`` names; ``UserError`` (one line naming it) if it cannot be loaded."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise UserError(f"cannot load target {target!r}: {FORM}")
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            obj = _module_from_file(Path(where), target)
        else:
            obj = importlib.import_module(where)
    except UserError:
        raise
    except BaseException as e:  # the user's module failed to import: name it, one line
        if isinstance(e, KeyboardInterrupt):
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        hint = ""
        if isinstance(e, ModuleNotFoundError) and e.name == where and Path(f"{where}.py").is_file():
            hint = f" (a file here: {where}.py:{attr})"
        raise UserError(
            f"cannot load target {target!r}: {type(e).__name__}: {first}{hint}"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UserError(f"cannot load target {target!r}: {where} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UserError(f"cannot load target {target!r}: {attr} is not callable")
    return obj
