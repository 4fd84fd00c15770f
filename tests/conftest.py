import gc
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # ``import helpers`` (tests/helpers.py)
# the repository root: worker processes that torch spawns import the test module (tests.x.y)
# by name, also when pytest was started as ``pytest`` rather than ``python -m pytest``
sys.path.insert(1, str(TESTS.parent))


def pytest_configure(config):
    """Set up every process that runs tests. The xdist controller (``make test``: ``-n auto``)
    runs none, so it skips this and starts its workers without importing torch first (about
    2 s of a start that nothing else can use)."""
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        return
    import torch
    from hypothesis import settings
    from threadpoolctl import threadpool_limits

    settings.register_profile("attnlab", max_examples=40, deadline=None)
    settings.load_profile("attnlab")
    torch.set_num_threads(1)  # small tensors; avoids thread start-up noise on 2-core CI
    # and one BLAS thread: the workers already fill the cores, and a lesson's float64 digits
    # are then those of its script and notebook (forks on one thread: helpers.fork_jobs)
    threadpool_limits(1, user_api="blas")


SHARED_SCOPES = ("module", "package", "session")
CHEAP_SHARED = {"browser"}  # a chromium per worker costs a second or two
# per-process caches of a lesson's states (tests/lessons/test_lessons.py): what they save is
# saved within one lesson's tests, which share a group by lesson instead of by module
PER_LESSON = {"prefixes"}


def _shares_a_fixture(item) -> bool:
    """Whether ``item`` uses a module- or session-scoped fixture of this test suite (one that
    builds something expensive once: a wheel, exported lessons, trained runs)."""
    for name, defs in item._fixtureinfo.name2fixturedefs.items():
        d = defs[-1]
        cheap = name in CHEAP_SHARED or name in PER_LESSON
        if d.scope in SHARED_SCOPES and d.baseid.startswith("tests") and not cheap:
            return True
    return False


# tests whose runs share a per-process cache of the library: the grader's prepared cases and
# each case's mistake versions (``grader.prepared``, per exercise and seed), which the 20-seed
# sweep computes for 7 exercises x 20 seeds; spread over the workers, each paid for all of them
SHARED_CACHE = {"test_verdict_and_name_are_the_same_for_every_seed": "grade/sweep"}
# modules whose tests run a lesson (``helpers.lesson_run``, the lesson's states): grouped by lesson
LESSON_RUNS = {
    "lessons/test_export.py",
    "lessons/test_lessons.py",
    "lessons/test_training_lessons.py",
    "lessons/test_in_their_language.py",
}


def _lesson(item) -> int | None:
    """The lesson ``item`` runs: its ``number`` parameter or its ``lesson`` mark."""
    params = getattr(item, "callspec", None)
    number = params.params.get("number") if params else None
    if number is None and (mark := item.get_closest_marker("lesson")):
        number = mark.args[0]
    return number


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into node ids
def pytest_collection_modifyitems(config, items):
    """``make test`` spreads the tests over the cores (pytest-xdist, ``--dist loadgroup``). A
    test that shares an expensive fixture stays with the rest of its module on one worker, so
    the fixture is built once; tests/explore is one group (session-scoped trained runs); the
    tests of one lesson in tests/lessons' lesson-running modules (its run in each language,
    its exports made from those runs and their scripts and notebooks) are a group of their
    own, ``lessonN``, so each of its runs and states is made once and the lessons spread over
    the workers; a test module may choose its tests' groups itself; every other test goes to
    whichever worker is free. ``python tools/suite_groups.py`` sums a run's
    CPU-seconds by group."""
    for item in items:
        rel = item.path.relative_to(TESTS)
        if item.get_closest_marker("xdist_group"):
            continue  # a group the test module chose
        if (group := SHARED_CACHE.get(item.originalname)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        elif rel.parts[0] == "explore":
            item.add_marker(pytest.mark.xdist_group("explore"))
        elif rel.as_posix() in LESSON_RUNS and (number := _lesson(item)) is not None:
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


def pytest_collection_finish(session):
    """Leave what exists once the tests are collected (every import's objects: about 400,000
    in a worker) out of the garbage collector's passes from here on (``gc.freeze``): each
    full pass walked them all. A whole suite, per worker: the collector's time 4.3 s against
    5.0-5.4 s, its full passes 0.15 s against 0.3 s each. They live as long as the process
    (modules, the collected tests); an object made before this point that becomes garbage
    later is not freed. Objects that tests make are collected as before."""
    gc.freeze()
