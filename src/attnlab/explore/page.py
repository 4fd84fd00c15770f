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
from . import font
from .data import Page, View
from .heads import find_heads

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)

WORDS = {
    "title": Text("attnlab explore", "attnlab explore", "attnlab explore"),
    "text": Text("text", "テキスト", "文本"),
    "training": Text(
        "training: the probe text at each evaluation",
        "学習中：各評価時の確認用テキスト",
        "训练过程：每次评估时的探针文本",
    ),
    "formed": Text("how attention formed", "アテンションの育ち方", "注意力如何形成"),
    "formed_help": Text(
        "the probe text as the model saw it at each evaluation during training: slide or play",
        "学習中の各評価時点で、モデルが確認用テキストに向けたアテンション。スライドか再生で見る",
        "训练中每次评估时模型在探针文本上的注意力：拖动滑块或播放",
    ),
    "probe": Text("training probe", "学習中の確認用テキスト", "训练探针文本"),
    "play": Text("play", "再生", "播放"),
    "pause": Text("pause", "一時停止", "暂停"),
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
        "左のトークンにマウスを重ねるか、タップするか、Tab で移ると、そのアテンションと正確な重みだけが見えます。",
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
    "multiply": Text("scores ×", "スコア ×", "分数 ×"),
    "scale": Text("divide by √d", "√d で割る", "除以 √d"),
    "causal": Text("causal mask", "因果マスク", "因果掩码"),
    "drag": Text(
        "the query of 光: drag it, or focus it and use the arrow keys",
        "「光」のクエリ：ドラッグするか、フォーカスして矢印キーで動かします",
        "“光”的查询：拖动它，或选中后用方向键移动",
    ),
    "scores": Text("scores", "スコア", "分数"),
    "strongest": Text(
        "the strongest {n} lines; pick a token for all of its weights",
        "強い順に {n} 本だけ表示。トークンを選ぶとその重みをすべて表示",
        "只显示最强的 {n} 条线；选中一个词元可看它的全部权重",
    ),
    "type_text": Text("type a text", "テキストを入力", "输入一段文本"),
    "show": Text("show its attention", "アテンションを見る", "查看注意力"),
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
    "guide_head": Text(
        "What you see: each query token on the left sends lines to the keys on the right it "
        "attends to; a thicker, darker line is a larger attention weight; each colour is one head.",
        "見方：左のクエリのトークンから、右の注目するキーへ線が伸びます。太く濃い線ほどアテンションの"
        "重みが大きく、色はヘッドを表します。",
        "怎么看：左边每个查询词元向右边它关注的键连线；线越粗越深，注意力权重越大；每种颜色是一个头。",
    ),
    "guide_s2s": Text(
        "What you see: each output character on the left, as it is written, attends to the input "
        "characters on the right; line weight = attention weight. Step through with the decoding "
        "slider.",
        "見方：左の出力文字は、書かれるときに右の入力文字へアテンションを向けます。線の太さ＝アテンショ"
        "ンの重み。デコードのスライダーで一文字ずつ進めます。",
        "怎么看：左边每个输出字符在生成时关注右边的输入字符；线的粗细 = 注意力权重。用解码滑块逐步查看。",
    ),
    "guide_matrix": Text(
        "What you see: each square is one head; a cell is that head's weight from its row (a "
        "query) to its column (a key), darker = larger. Click a square to enlarge it.",
        "見方：各マスは一つのヘッドです。セルは、その行（クエリ）から列（キー）へのヘッドの重みで、"
        "濃いほど大きい値です。マスをクリックすると拡大します。",
        "怎么看：每个方块是一个头；格子是该头从行（查询）到列（键）的权重，越深越大。点击方块可放大。",
    ),
    "guide_playground": Text(
        "What you see: the red arrow is 光's query, the grey points are the keys; drag the query "
        "and watch the scores (query · key) and the softmax weights follow.",
        "見方：赤い矢印が「光」のクエリ、灰色の点がキーです。クエリをドラッグすると、スコア（クエリ・"
        "キーの内積）とソフトマックスの重みが追いかけて変わります。",
        "怎么看：红色箭头是“光”的查询，灰色点是键；拖动查询，看分数（查询 · 键）和 softmax 权重如何变化。",
    ),
    "dismiss": Text("hide this line", "この説明を隠す", "隐藏这行说明"),
    "legend": Text(
        "click a head to see it alone, again for all",
        "ヘッドをクリックでそれだけ表示、もう一度で全部",
        "点击一个头只看它，再点一次看全部",
    ),
    "strongest_keys": Text("strongest keys first", "重みの大きいキーから順に", "权重最大的键在前"),
    "all_weights": Text(
        "all {n} weights, in text order",
        "全 {n} 個の重み（テキスト順）",
        "全部 {n} 个权重（按文本顺序）",
    ),
    "heads_found": Text("heads to look at", "注目したいヘッド", "值得一看的头"),
    "heads_found_help": Text(
        "found from the weights on this text: the share of its weight each head puts there "
        "(even attention would put the second number)",
        "このテキストでの重みから自動で検出：そのヘッドが重みのどれだけをそこへ向けるか"
        "（均等なアテンションなら二つ目の数）",
        "根据这段文本上的权重自动找出：该头把多少权重放在那里（均匀注意力时为第二个数）",
    ),
    "no_heads": Text(
        "No head here clearly attends to the previous character, the first one, spaces or the "
        "line start (train longer, or try a longer text).",
        "直前の文字・最初の文字・空白・行頭にはっきりアテンションを向けるヘッドは、ここにはありません"
        "（もっと学習するか、長いテキストで試してください）。",
        "这里没有明显关注前一个字符、第一个字符、空格或行首的头（多训练一会儿，或换一段更长的文本）。",
    ),
    "previous": Text("the previous character", "直前の文字", "前一个字符"),
    "first": Text("the first character", "最初の文字", "第一个字符"),
    "space": Text("spaces", "空白", "空格"),
    "line_start": Text("the start of its line", "行頭", "行首"),
    "matrix_help": Text(
        "Click a square to enlarge that head; there, hover a cell for its row, column and weight.",
        "マスをクリックするとそのヘッドを拡大します。拡大後はセルにマウスを重ねると、行・列・重みが"
        "見えます。",
        "点击一个方块放大该头；放大后把鼠标移到格子上，可看到它的行、列和权重。",
    ),
    "cell_help": Text(
        "Hover or tap a cell to see its row (query), column (key) and weight.",
        "セルにマウスを重ねるかタップすると、行（クエリ）・列（キー）・重みが見えます。",
        "把鼠标移到格子上或点按它，可看到它的行（查询）、列（键）和权重。",
    ),
    "row": Text("row", "行", "行"),
    "column": Text("column", "列", "列"),
}


def _asset(name: str) -> str:
    return (resources.files("attnlab.explore") / "assets" / name).read_text(encoding="utf-8")


def script_json(data: dict) -> str:
    """JSON that is safe inside a <script> block: no <, > or & survive as themselves."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(
    data: dict, lang: str = "en", title: str = "attnlab explore", csp: str = CSP, glyphs: str = ""
) -> str:
    """The whole page for ``data`` (a model page or the playground), words in ``lang``;
    ``glyphs``: characters the page may show later (a live page's vocabulary), which the
    page's CJK font (``font``) holds too."""
    if lang not in LANGS:
        lang = "en"
    data = {**data, "lang": lang, "words": {k: t(lang) for k, t in WORDS.items()}}
    values = {
        "lang": lang,
        "csp": csp,
        "title": html.escape(title),
        "js": _asset("page.js"),
        "data": script_json(data),
    }
    face = font.font_face(title + values["data"] + glyphs, also=values["js"])
    values["css"] = face + _asset("page.css")
    return re.sub(
        r"\{(lang|csp|title|css|data|js)\}", lambda m: values[m.group(1)], _asset("page.html")
    )


def view_json(view: View, kind: str) -> dict:
    """A view as the page reads it; a GPT's text views also name their recognisable heads."""
    out = view.to_json()
    if kind == "gpt" and view.step is None and view.causal:
        out["heads_found"] = [f.to_json() for f in find_heads(view.weights, view.keys)]
    return out


def model_page(page: Page, lang: str = "en") -> str:
    data = {
        "mode": "model",
        "kind": page.kind,
        "views": [view_json(v, page.kind) for v in page.views],
    }
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


__all__ = [
    "CHARS",
    "CSP",
    "KEYS",
    "model_page",
    "playground_page",
    "render",
    "script_json",
    "view_json",
]
