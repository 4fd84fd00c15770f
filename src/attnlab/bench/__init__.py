"""``attnlab bench``: time and peak memory of attention against the sequence length.

Each method runs in its own process (``probe``), all lengths in ascending order; this module
gathers the rows, measures the machine's practical matmul roof at the start, and renders a table,
JSON or a log-log plot.
"""

from .runner import (
    BenchConfig,
    Row,
    attention_flops,
    available_bytes,
    matmul_roof,
    plot,
    run,
    table,
    to_json,
)

__all__ = [
    "BenchConfig",
    "Row",
    "attention_flops",
    "available_bytes",
    "matmul_roof",
    "plot",
    "run",
    "table",
    "to_json",
]
