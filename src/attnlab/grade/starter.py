"""Starter files: the contract, a docstring and TODOs, ready to fill in and grade."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text
from .exercises import EXERCISES

TEMPLATE = '''"""attnlab exercise: {name}

{summary}

Grade it with:  attnlab grade {filename}
Allowed imports: {allowed}.
"""

import numpy as np


def {signature}:
    """{doc}
    """
    # TODO: write your implementation here.
    raise NotImplementedError("{name}")


if __name__ == "__main__":
    # A quick try of your own; the grader checks many more cases.
{example}
'''

EXAMPLES = {
    "softmax_rows": "    print(softmax_rows(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])))",
    "causal_mask": "    print(causal_mask(3))",
    "scaled_dot_product_attention": "    Q = K = V = np.eye(3)\n    print(scaled_dot_product_attention(Q, K, V, mask=True))",
    "self_attention": (
        "    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])\n"
        "    out, w = self_attention(X, np.array([[1.0, 0.0], [2.0, 2.0]]), np.eye(2), np.eye(2), mask=True)\n"
        "    print(w)  # expected rows: [1, 0, 0], [0.5, 0.5, 0], [0.178, 0.088, 0.734]"
    ),
    "multi_head_attention": "    X = np.eye(4)\n    W = np.eye(4)\n    print(multi_head_attention(X, W, W, W, W, num_heads=2))",
    "positional_encoding": "    print(positional_encoding(4, 6))",
    "additive_attention": "    print(additive_attention(np.ones(2), np.eye(2), np.eye(2), np.eye(2), np.ones(2)))",
}


def render(name: str, filename: str = "solution.py") -> str:
    ex = EXERCISES[name]
    allowed = "NumPy and the standard library" if ex.allowed_imports is not None else "anything"
    doc = ex.doc.replace("\n", "\n    ")
    return TEMPLATE.format(
        name=name,
        summary=ex.summary.en,
        filename=filename,
        allowed=allowed,
        signature=ex.signature,
        doc=doc,
        example=EXAMPLES[name],
    )


def write_starter(name: str, path: str | Path | None = None, force: bool = False) -> Path:
    """Write the starter for ``name`` to ``path`` (default ``NAME.py``); never overwrites unless
    ``force``. The file appears whole or not at all (temp file + rename)."""
    if name not in EXERCISES:
        raise UserError(f"unknown exercise {name!r}; choose one of {', '.join(EXERCISES)}")
    path = Path(path) if path is not None else Path(f"{name}.py")
    if path.is_dir():
        path = path / f"{name}.py"
    if path.exists() and not force:
        raise FileExistsError(f"{path} already exists; pass --force to overwrite it")
    return atomic_write_text(path, render(name, path.name))
