import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import settings

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # ``import helpers`` (tests/helpers.py)
# the repository root: worker processes that torch spawns import the test module (tests.x.y)
# by name, also when pytest was started as ``pytest`` rather than ``python -m pytest``
sys.path.insert(1, str(TESTS.parent))

settings.register_profile("attnlab", max_examples=40, deadline=None)
settings.load_profile("attnlab")
torch.set_num_threads(1)  # small tensors; avoids thread start-up noise on 2-core CI


SHARED_SCOPES = ("module", "package", "session")
CHEAP_SHARED = {"browser"}  # a chromium per worker costs a second or two


def _shares_a_fixture(item) -> bool:
    """Whether ``item`` uses a module- or session-scoped fixture of this test suite (one that
    builds something expensive once: a wheel, exported lessons, trained runs)."""
    for name, defs in item._fixtureinfo.name2fixturedefs.items():
        d = defs[-1]
        if d.scope in SHARED_SCOPES and d.baseid.startswith("tests") and name not in CHEAP_SHARED:
            return True
    return False


# modules whose tests of a lesson that trains read that lesson's runs (``helpers.lesson_run``)
LESSON_RUNS = {"lessons/test_lessons.py", "lessons/test_training_lessons.py"}


def _trained_lesson(item) -> int | None:
    """The lesson that trains (6, 7) whose runs ``item`` reads: its ``number`` parameter or its
    ``lesson`` mark."""
    from helpers import trains

    params = getattr(item, "callspec", None)
    number = params.params.get("number") if params else None
    if number is None and (mark := item.get_closest_marker("lesson")):
        number = mark.args[0]
    return number if number is not None and trains(number) else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into node ids
def pytest_collection_modifyitems(config, items):
    """``make test`` spreads the tests over the cores (pytest-xdist, ``--dist loadgroup``). A
    test that shares an expensive fixture stays with the rest of its module on one worker, so
    the fixture is built once; tests/explore is one group (session-scoped trained runs); the
    tests of a lesson that trains (in tests/lessons' two lesson-running modules) are a group of
    their own, so each of its runs is made once; every other test goes to whichever worker is
    free."""
    for item in items:
        rel = item.path.relative_to(TESTS)
        if rel.parts[0] == "explore":
            item.add_marker(pytest.mark.xdist_group("explore"))
        elif rel.as_posix() in LESSON_RUNS and (number := _trained_lesson(item)):
            item.add_marker(pytest.mark.xdist_group(f"lesson{number}"))
        elif _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(rel.as_posix()))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright. Under CI=true a missing browser fails the test
    (CI must install it); elsewhere the test skips with the install hint."""
    import os
    from pathlib import Path

    hint = "apt-get install chromium && pip install playwright"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"playwright is not installed ({hint})")
        pytest.skip(f"playwright is not installed ({hint})")
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing ({hint})")
        pytest.skip(f"{CHROMIUM} is missing ({hint})")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
