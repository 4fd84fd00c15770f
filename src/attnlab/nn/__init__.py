"""PyTorch attention: a functional core (``attnlab.nn.functional``) and thin modules."""

from . import functional
from .attention import (
    AdditiveAttention,
    KVCache,
    LuongAttention,
    MultiHeadAttention,
    ScoredAttention,
)
from .positional import LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding
from .scores import SCORES, make_score

__all__ = [
    "SCORES",
    "AdditiveAttention",
    "KVCache",
    "LearnedPositionalEmbedding",
    "LuongAttention",
    "MultiHeadAttention",
    "RotaryEmbedding",
    "ScoredAttention",
    "SinusoidalPositionalEncoding",
    "functional",
    "make_score",
]
