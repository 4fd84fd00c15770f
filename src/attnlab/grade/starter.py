"""Starter files: the contract, a docstring and TODOs, ready to fill in and grade."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text
from .exercises import EXERCISES

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


# The frame's words and each exercise's contract in Japanese (the English contract is the
# exercise's own doc). Code, names and shapes stay as they are in both.
FRAME = {
    "en": {
        "title": "attnlab exercise: ",
        "grade": "Grade it with:  ",
        "allowed_label": "Allowed imports: ",
        "numpy": "NumPy and the standard library",
        "anything": "anything",
        "end": ".",
        "todo": "TODO: write your implementation here.",
        "try": "A quick try of your own; the grader checks many more cases.",
    },
    "ja": {
        "title": "attnlab の課題：",
        "grade": "採点：",
        "allowed_label": "使ってよい import：",
        "numpy": "NumPy と標準ライブラリ",
        "anything": "何でも",
        "end": "。",
        "todo": "TODO: ここに実装を書きます。",
        "try": "まず自分で試します。採点ではもっと多くのケースを確かめます。",
    },
}

DOCS_JA = {
    "softmax_rows": "x: (T, S) のスコア。各行に softmax をかけ、どの行も和が 1 になる (T, S) の重みを返します。\n"
    "大きなスコアでもあふれないよう、exp の前に各行の最大値を引きます。",
    "causal_mask": "T: 系列の長さ。クエリ t がキー s (s <= t) に注意してよい位置を True とする (T, T) の\n"
    "bool 配列を返します。対角線を含む下三角で、np.tril と同じです。",
    "scaled_dot_product_attention": "Q: (T, d) のクエリ、K: (S, d) のキー、V: (S, d_v) の値。mask=True なら\n"
    "因果マスクをかけます（クエリ t はキー 0..t だけを見ます）。(T, d_v) の出力\n"
    "softmax(Q K^T / sqrt(d)) V を返します。",
    "self_attention": "X: (T, d_model) の入力、W_Q, W_K, W_V: (d_model, d_k)。Q = X W_Q、K = X W_K、V = X W_V。\n"
    "スコアは Q K^T / sqrt(d_k)（T x T）。mask=True なら対角より上のスコアを -inf にし（np.tril）、\n"
    "各行に softmax をかけます。(出力 (T, d_k), 重み (T, T)) を返します。",
    "multi_head_attention": "X: (T, d_model)、W_Q, W_K, W_V, W_O: (d_model, d_model)。num_heads は d_model を\n"
    "割り切ります。射影して最後の軸を幅 d_k = d_model // num_heads の num_heads 個のヘッドに分け、\n"
    "ヘッドごとに scaled dot-product attention を計算し（スケール 1/sqrt(d_k)、mask なら因果）、\n"
    "ヘッドを順につないで W_O を掛けます。(T, d_model) の出力を返します。",
    "positional_encoding": "(T, d) の正弦波位置エンコーディングを返します：PE[pos, 2i] = sin(pos / 10000^(2i/d))、\n"
    "PE[pos, 2i+1] = cos(pos / 10000^(2i/d))。d は偶数です。",
    "additive_attention": "query: (d_q,) のデコーダ状態、keys: (S, d_k) のエンコーダ状態（値も兼ねます）、\n"
    "W_q: (d_q, d_a)、W_k: (d_k, d_a)、v: (d_a,)。スコアは v・tanh(query W_q + keys W_k)、\n"
    "重み = softmax(スコア) (S,)、文脈 = 重み @ keys (d_k,)。(文脈, 重み) を返します。",
}

TEMPLATE = '''"""{title}{name}

{summary}

{grade}attnlab grade {filename}
{allowed_label}{allowed}{end}
"""

import numpy as np


def {signature}:
    """{doc}
    """
    # {todo}
    raise NotImplementedError("{name}")


if __name__ == "__main__":
    # {try_}
{example}
'''


def render(name: str, filename: str = "solution.py", lang: str = "en") -> str:
    """The starter's text for ``name`` in ``lang`` (en or ja)."""
    ex = EXERCISES[name]
    words = FRAME.get(lang, FRAME["en"])
    doc = DOCS_JA[name] if lang == "ja" else ex.doc
    return TEMPLATE.format(
        title=words["title"],
        name=name,
        summary=ex.summary(lang),
        grade=words["grade"],
        filename=filename,
        allowed_label=words["allowed_label"],
        allowed=words["numpy"] if ex.allowed_imports is not None else words["anything"],
        end=words["end"],
        signature=ex.signature,
        doc=doc.replace("\n", "\n    "),
        todo=words["todo"],
        try_=words["try"],
        example=EXAMPLES[name],
    )


def write_starter(
    name: str, path: str | Path | None = None, force: bool = False, lang: str = "en"
) -> Path:
    """Write the starter for ``name`` in ``lang`` to ``path`` (default ``NAME.py``; a folder
    gets NAME.py inside); never overwrites unless ``force``. The file appears whole or not at
    all (temp file + rename)."""
    if name not in EXERCISES:
        raise UserError(f"unknown exercise {name!r}; choose one of {', '.join(EXERCISES)}")
    path = Path(path) if path is not None else Path(f"{name}.py")
    if path.is_dir():
        path = path / f"{name}.py"
    if path.exists() and not force:
        raise FileExistsError(f"{path} already exists; pass --force to overwrite it")
    return atomic_write_text(path, render(name, path.name, lang))
