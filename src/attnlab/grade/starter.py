"""Starter files: the contract, a docstring and TODOs, ready to fill in and grade."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text
from ..tables import fit, wide
from .exercises import EXERCISES

EXAMPLES = {
    "softmax_rows": "    print(softmax_rows(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])))",
    "causal_mask": "    print(causal_mask(3))",
    "scaled_dot_product_attention": "    Q = K = V = np.eye(3)\n    print(scaled_dot_product_attention(Q, K, V, mask=True))",
    "self_attention": (
        "    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])\n"
        "    W_Q = np.array([[1.0, 0.0], [2.0, 2.0]])\n"
        "    out, w = self_attention(X, W_Q, np.eye(2), np.eye(2), mask=True)\n"
        "    print(w)  # expected rows: [1, 0, 0], [0.5, 0.5, 0], [0.178, 0.088, 0.734]"
    ),
    "multi_head_attention": "    X = np.eye(4)\n    W = np.eye(4)\n    print(multi_head_attention(X, W, W, W, W, num_heads=2))",
    "positional_encoding": "    print(positional_encoding(4, 6))",
    "additive_attention": "    eye = np.eye(2)\n    print(additive_attention(np.ones(2), eye, eye, eye, np.ones(2)))",
}


# The frame's words and each exercise's contract in Japanese and Chinese (the English one is the
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
        "todo": "TODO: ここに実装を書いてください。",
        "try": "まず自分で試してみましょう。採点では、もっと多くのケースを確かめます。",
    },
    "zh": {
        "title": "attnlab 练习：",
        "grade": "评分：",
        "allowed_label": "允许的 import：",
        "numpy": "NumPy 和标准库",
        "anything": "任意",
        "end": "。",
        "todo": "TODO: 在这里写你的实现。",
        "try": "先自己试一下；评分时会检查多得多的用例。",
    },
}

DOCS_ZH = {
    "softmax_rows": "x: (T, S) 的分数。返回 (T, S) 的权重：对每一行做 softmax，每行之和为 1。\n"
    "在 exp 之前减去每一行的最大值，这样大分数也不会溢出。",
    "causal_mask": "T: 序列长度。返回 (T, T) 的 bool 数组，查询 t 可以关注键 s（s <= t）的位置为 True：\n"
    "包含对角线的下三角，和 np.tril 一样。",
    "scaled_dot_product_attention": "Q: (T, d) 的查询，K: (S, d) 的键，V: (S, d_v) 的值。mask=True 时\n"
    "使用因果掩码（查询 t 只看键 0..t）。返回 (T, d_v) 的输出 softmax(Q K^T / sqrt(d)) V。",
    "self_attention": "X: (T, d_model) 的输入，W_Q, W_K, W_V: (d_model, d_k)。Q = X W_Q，K = X W_K，V = X W_V。\n"
    "分数是 Q K^T / sqrt(d_k)（T x T）。mask=True 时把对角线以上的分数设为 -inf（np.tril），\n"
    "再对每一行做 softmax。返回 (输出 (T, d_k), 权重 (T, T))。",
    "multi_head_attention": "X: (T, d_model)，W_Q, W_K, W_V, W_O: (d_model, d_model)。num_heads 整除 d_model。\n"
    "先投影，把最后一个轴拆成 num_heads 个宽 d_k = d_model // num_heads 的头，\n"
    "每个头做 scaled dot-product attention（缩放 1/sqrt(d_k)，mask=True 时用因果掩码），\n"
    "按顺序拼接各头，再乘以 W_O。返回 (T, d_model) 的输出。",
    "positional_encoding": "返回 (T, d) 的正弦位置编码：PE[pos, 2i] = sin(pos / 10000^(2i/d))，\n"
    "PE[pos, 2i+1] = cos(pos / 10000^(2i/d))。d 为偶数。",
    "additive_attention": "query: (d_q,) 的解码器状态，keys: (S, d_k) 的编码器状态（同时也是值），\n"
    "W_q: (d_q, d_a)，W_k: (d_k, d_a)，v: (d_a,)。分数为 v · tanh(query W_q + keys W_k)，\n"
    "权重 = softmax(分数) (S,)，上下文 = 权重 @ keys (d_k,)。返回 (上下文, 权重)。",
}

DOCS_JA = {
    "softmax_rows": "x: (T, S) のスコア。各行にソフトマックスをかけ、どの行も和が 1 になる (T, S) の重みを返します。\n"
    "大きなスコアでもオーバーフローしないよう、exp の前に各行の最大値を引きます。",
    "causal_mask": "T: 系列の長さ。クエリ t がキー s (s <= t) をアテンションで見てよい位置を True とする (T, T) の\n"
    "bool 配列を返します。対角線を含む下三角で、np.tril と同じです。",
    "scaled_dot_product_attention": "Q: (T, d) のクエリ、K: (S, d) のキー、V: (S, d_v) のバリュー。mask=True なら\n"
    "因果マスクをかけます（クエリ t はキー 0..t だけを見ます）。(T, d_v) の出力\n"
    "softmax(Q K^T / sqrt(d)) V を返します。",
    "self_attention": "X: (T, d_model) の入力、W_Q, W_K, W_V: (d_model, d_k)。Q = X W_Q、K = X W_K、V = X W_V。\n"
    "スコアは Q K^T / sqrt(d_k)（T x T）。mask=True なら対角より上のスコアを -inf にし（np.tril）、\n"
    "各行にソフトマックスをかけます。(出力 (T, d_k), 重み (T, T)) を返します。",
    "multi_head_attention": "X: (T, d_model)、W_Q, W_K, W_V, W_O: (d_model, d_model)。num_heads は d_model を\n"
    "割り切ります。射影して最後の軸を幅 d_k = d_model // num_heads の num_heads 個のヘッドに分け、\n"
    "ヘッドごとに scaled dot-product attention を計算し（スケール 1/sqrt(d_k)、mask=True なら因果マスク）、\n"
    "ヘッドを順につないで W_O を掛けます。(T, d_model) の出力を返します。",
    "positional_encoding": "(T, d) の正弦波位置エンコーディングを返します：PE[pos, 2i] = sin(pos / 10000^(2i/d))、\n"
    "PE[pos, 2i+1] = cos(pos / 10000^(2i/d))。d は偶数です。",
    "additive_attention": "query: (d_q,) のデコーダ状態、keys: (S, d_k) のエンコーダ状態（バリューも兼ねます）、\n"
    "W_q: (d_q, d_a)、W_k: (d_k, d_a)、v: (d_a,)。スコアは v · tanh(query W_q + keys W_k)、\n"
    "重み = softmax(スコア) (S,)、文脈 = 重み @ keys (d_k,)。(文脈, 重み) を返します。",
}

DOC_WIDTH = 72  # the docstring's text: with its indent and quotes, a line fits 79 columns
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
    """The starter's text for ``name`` in ``lang`` (en, ja or zh)."""
    ex = EXERCISES[name]
    words = FRAME.get(lang, FRAME["en"])
    doc = {"ja": DOCS_JA, "zh": DOCS_ZH}.get(lang, {}).get(name, ex.doc)
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
        doc=fit(_paragraph(doc), DOC_WIDTH).replace("\n", "\n    "),
        todo=words["todo"],
        try_=words["try"],
        example=EXAMPLES.get(name) or getattr(ex, "example", ""),  # a teacher's
    )


def _paragraph(doc: str) -> str:
    """The doc's lines as one paragraph, for ``fit`` to break afresh: joined by a space, or by
    nothing between two Japanese or Chinese characters."""
    lines = doc.split("\n")
    out = lines[0]
    for line in lines[1:]:
        out += ("" if out and line and wide(out[-1]) and wide(line[0]) else " ") + line
    return out


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
