import numpy as np
import pytest
import torch
from hypothesis import settings

settings.register_profile("attnlab", max_examples=40, deadline=None)
settings.load_profile("attnlab")
torch.set_num_threads(1)  # small tensors; avoids thread start-up noise on 2-core CI


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
