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
from .ring import ring_attention, shard_positions, shard_sequence, unshard_sequence
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
    "ring_attention",
    "shard_positions",
    "shard_sequence",
    "unshard_sequence",
]
