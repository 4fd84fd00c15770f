"""One self-contained HTML file: the page's script, style and data inline, nothing fetched.

The data sits in a ``<script type="application/json">`` block with ``<``, ``>`` and ``&``
escaped, so no text (a token, a title) can close it; the script reads it with JSON.parse and
writes every text as a text node. The Content-Security-Policy allows inline script and style
and data:/blob: images only: the page cannot load anything from anywhere, even by mistake.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources

import numpy as np

from ..i18n import LANGS, Text
from .data import Page

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:"
)

WORDS = {
    "title": Text("attnlab explore", "attnlab explore", "attnlab explore"),
    "text": Text("text", "テキスト", "文本"),
    "training": Text(
        "training: the probe text at each evaluation",
        "学習中：各評価時の確認用テキスト",
        "训练过程：每次评估时的探针文本",
    ),
    "formed": Text("how attention formed", "注意の育ち方", "注意力如何形成"),
    "step": Text("step", "ステップ", "步"),
    "layer": Text("layer", "層", "层"),
    "head": Text("head", "ヘッド", "头"),
    "all": Text("all heads", "全ヘッド", "所有头"),
    "decode": Text("decoding step", "デコードの段階", "解码步骤"),
    "head_view": Text("head view", "ヘッドビュー", "头视图"),
    "matrix_view": Text("matrix view", "行列ビュー", "矩阵视图"),
    "export_svg": Text("save SVG", "SVG で保存", "保存 SVG"),
    "export_png": Text("save PNG", "PNG で保存", "保存 PNG"),
    "queries": Text("query", "クエリ", "查询"),
    "keys": Text("keys", "キー", "键"),
    "weights": Text("weights", "重み", "权重"),
    "hover": Text(
        "Hover, tap or tab to a token on the left to see only its attention and the exact weights.",
        "左のトークンにマウスを重ねるか、タップするか、Tab で移ると、その注意と正確な重みだけが見えます。",
        "把鼠标移到左侧的词元上、点按它或用 Tab 键选中，就只显示它的注意力和精确的权重。",
    ),
    "predicts": Text(
        "the model's next-token guesses", "モデルが予測する次のトークン", "模型预测的下一个词元"
    ),
    "probability": Text(
        "probability of the written character", "書いた文字の確率", "写出该字符的概率"
    ),
    "output": Text("output", "出力", "输出"),
    "back": Text("all heads", "全ヘッドに戻る", "返回所有头"),
    "playground_title": Text(
        "床前明月光: move the query of 光",
        "床前明月光：「光」のクエリを動かす",
        "床前明月光：移动“光”的查询",
    ),
    "query": Text("query of 光", "「光」のクエリ", "“光”的查询"),
    "multiply": Text("scores ×", "点数 ×", "分数 ×"),
    "scale": Text("divide by √d", "√d で割る", "除以 √d"),
    "causal": Text("causal mask", "因果マスク", "因果掩码"),
    "drag": Text(
        "the query of 光: drag it, or focus it and use the arrow keys",
        "「光」のクエリ：ドラッグするか、フォーカスして矢印キーで動かします",
        "“光”的查询：拖动它，或选中后用方向键移动",
    ),
    "scores": Text("scores", "点数", "分数"),
    "strongest": Text(
        "the strongest {n} lines; pick a token for all of its weights",
        "強い順に {n} 本だけ表示。トークンを選ぶとその重みをすべて表示",
        "只显示最强的 {n} 条线；选中一个词元可看它的全部权重",
    ),
    "type_text": Text("type a text", "テキストを入力", "输入一段文本"),
    "show": Text("show its attention", "注意を見る", "查看注意力"),
    "row_of": Text("the row of 光", "「光」の行", "“光”这一行"),
    "all_rows": Text(
        "every character (the others' queries are their keys)",
        "すべての文字（他の文字のクエリは自分のキー）",
        "所有字符（其他字符的查询就是它们自己的键）",
    ),
    "playground_help": Text(
        "Each point is a character's key: feature 0 'in the sky', feature 1 'a place or a "
        "direction'. The weights are the softmax of the dot products of 光's query with every key.",
        "各点は文字のキーです。特徴 0 は「空にある」、特徴 1 は「場所・方向」。重みは、「光」の"
        "クエリと各キーの内積の softmax です。",
        "每个点是一个字的键：特征 0 表示“在天上”，特征 1 表示“地点或方向”。权重是“光”的查询与"
        "每个键的点积的 softmax。",
    ),
}


def _asset(name: str) -> str:
    return (resources.files("attnlab.explore") / "assets" / name).read_text(encoding="utf-8")


def script_json(data: dict) -> str:
    """JSON that is safe inside a <script> block: no <, > or & survive as themselves."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(data: dict, lang: str = "en", title: str = "attnlab explore", csp: str = CSP) -> str:
    """The whole page for ``data`` (a model page or the playground), words in ``lang``."""
    if lang not in LANGS:
        lang = "en"
    data = {**data, "lang": lang, "words": {k: t(lang) for k, t in WORDS.items()}}
    values = {
        "lang": lang,
        "csp": csp,
        "title": html.escape(title),
        "css": _asset("page.css"),
        "js": _asset("page.js"),
        "data": script_json(data),
    }
    return re.sub(
        r"\{(lang|csp|title|css|data|js)\}", lambda m: values[m.group(1)], _asset("page.html")
    )


def model_page(page: Page, lang: str = "en") -> str:
    data = {"mode": "model", "kind": page.kind, "views": [v.to_json() for v in page.views]}
    return render(data, lang, f"attnlab explore: {page.title}")


CHARS = list("床前明月光")
KEYS = np.array([[0.1, 0.9], [0.0, 1.0], [0.9, 0.1], [1.0, 0.0], [0.8, 0.2]])  # lesson 1's keys


def playground_page(lang: str = "en") -> str:
    """Lesson 1's example, live: the query of 光 (start [1, 0]) against the five keys."""
    data = {
        "mode": "playground",
        "playground": {"chars": CHARS, "keys": KEYS.tolist(), "query": [1.0, 0.0]},
    }
    return render(data, lang, "attnlab explore: 床前明月光")


__all__ = ["CHARS", "CSP", "KEYS", "model_page", "playground_page", "render", "script_json"]
