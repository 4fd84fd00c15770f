"""Every public class a user builds or reads back says what it is: a real docstring, not the
signature a dataclass writes for itself."""

import importlib
import inspect

import pytest

PACKAGES = ["attnlab.nn", "attnlab.models", "attnlab.train", "attnlab.bench", "attnlab.data"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_class_has_a_docstring(package):
    mod = importlib.import_module(package)
    missing = []
    for name in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
        obj = getattr(mod, name)
        if not inspect.isclass(obj) or not obj.__module__.startswith("attnlab"):
            continue
        doc = (obj.__doc__ or "").strip()
        if not doc or doc.startswith(f"{obj.__name__}("):  # a dataclass's own signature line
            missing.append(name)
    assert not missing, f"{package}: no docstring on {missing}"
