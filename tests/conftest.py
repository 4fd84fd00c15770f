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


def pytest_collection_modifyitems(config, items):
    """``make test`` spreads the tests over the cores (pytest-xdist, ``--dist loadgroup``): each
    module stays on one worker, so its module-scoped fixtures (a wheel build, exported lessons)
    are built once; tests/explore shares session-scoped trained runs, so it is one group."""
    for item in items:
        rel = item.path.relative_to(TESTS)
        group = rel.parts[0] if rel.parts[0] == "explore" else rel.as_posix()
        item.add_marker(pytest.mark.xdist_group(group))


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
