"""Every lesson is written in attnlab's own words: no prose file and no comment catalogue shares a
long run of characters with the course texts in ``../shared/course/`` (issue 32).

A shared run counts when it is 12 characters or longer, or holds 6 or more CJK ideographs (kanji,
hanzi): six of them already make a phrase of content words, while a run of kana alone is grammar
(「してください」, 「ではありません」) that any two Japanese texts share. Both sides are compared after NFKC, lower case and with all
whitespace removed, so that 「3 行」 and 「3行」 or a line break in the middle change nothing. What
may be shared is cut out of both sides before comparing, so that no run can span it:

- the course's fixed examples and technical terms (``TERMS``): 床前明月光, the paper's title,
  アテンション, 位置エンコーディング, ...;
- code: Markdown code spans, dotted or underscored names (``F.scaled_dot_product_attention``,
  ``is_causal``), calls and their arguments (``np.tril(...)``), tensor shapes such as
  ``(T, d_model)``, and the ``{placeholders}`` a lesson fills with computed numbers.

The course folder lies beside the repository (``../shared/course``; for a git worktree, beside the
main checkout too). Without it the test skips, saying where it looked.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from importlib import resources
from pathlib import Path

import pytest

from attnlab.lessons import source
from helpers import shared_folder

ROOT = Path(__file__).resolve().parents[2]
LONG, LONG_CJK = 12, 6  # a run this long (or with this many CJK characters) is copied text
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")  # ideographs: kanji, hanzi
CUT = "\x00"  # stands where an allowed term or a piece of code was: no run spans it

# Words any text on attention uses, and the course's fixed examples: they may be shared.
TERMS = (
    # the fixed examples and titles
    "床前明月光",
    "床前明月",
    "attention is all you need",
    "the cat sat on the mat",
    "i love natural language processing",
    # terms, ja
    "マルチヘッドアテンション",
    "マルチヘッド",
    "自己アテンション",
    "セルフアテンション",
    "因果的自己アテンション",
    "スケーリング",
    "アテンション",
    "ソフトマックス",
    "クエリ・キー・バリュー",
    "クエリ",
    "バリュー",
    "位置エンコーディング",
    "エンコーダ",
    "デコーダ",
    "ハイパーパラメータ",
    "パープレキシティ",
    "トランスフォーマー",
    "ブロードキャスト",
    "ミニプロジェクト",
    "バックプロパゲーション",
    "誤差逆伝播法",
    "勾配降下法",
    "勾配消失",
    "勾配爆発",
    "勾配クリッピング",
    "交差エントロピー",
    "隠れ状態",
    "大規模言語モデル",
    "言語モデル",
    "埋め込みベクトル",
    "残差接続",
    "層正規化",
    "下三角行列",
    "内積",
    "標準偏差",
    # terms, zh
    "多头注意力",
    "自注意力",
    "因果自注意力",
    "缩放点积注意力",
    "注意力",
    "位置编码",
    "因果掩码",
    "查询",
    "标准差",
    "下三角",
    "点积",
    # terms, en and code words the course prints
    "self-attention",
    "multi-head attention",
    "cross-attention",
    "scaled dot-product attention",
    "positional encoding",
    "attention weights",
    "weighted sum",
    "teacher forcing",
    "seq2seq",
    "sequence-to-sequence",
    "transformer",
    "softmax",
    "keepdims=true",
    "is_causal=true",
    "is_causal=false",
    "1000、2000、4000",
    "1000,2000,4000",
    "(32,100,512)",
    "(32,8,100,100)",
)

CODE = [
    re.compile(r"`[^`\n]*`"),  # a Markdown code span
    re.compile(r"\{[^{}\n]*\}"),  # a placeholder the lesson fills: {w[3]:.2f}
    re.compile(
        r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\([^()\n]*\))?", re.A
    ),  # np.tril(...), F.softmax
    re.compile(
        r"[A-Za-z]\w*_\w+(?:\([^()\n]*\))?", re.A
    ),  # d_model, scaled_dot_product_attention(...)
    re.compile(r"\([A-Za-z0-9_\s,.+\-*/×]*\)"),  # a shape or a tuple: (T, d_model), (B, 1, 1, S)
]


def normal(text: str) -> str:
    """``text`` as compared: code and allowed terms cut out, NFKC, lower case, no whitespace."""
    text = unicodedata.normalize("NFKC", text)
    for pattern in CODE:
        text = pattern.sub(CUT, text)
    text = re.sub(r"\s+", "", text.lower())
    for term in sorted(TERMS, key=len, reverse=True):
        text = text.replace(re.sub(r"\s+", "", unicodedata.normalize("NFKC", term)), CUT)
    return text


def copied(run: str) -> bool:
    return len(run) >= LONG or len(HAN.findall(run)) >= LONG_CJK


def shared_runs(text: str, reference: str) -> list[str]:
    """The maximal runs of ``text`` (normalised) found in ``reference`` (normalised) that count
    as copied, longest first."""
    shortest = LONG_CJK
    grams = {reference[i : i + shortest] for i in range(len(reference) - shortest + 1)}
    found, end = set(), 0
    for i in range(len(text) - shortest + 1):
        if text[i : i + shortest] not in grams or CUT in text[i : i + shortest]:
            continue
        j = i + shortest
        while j < len(text) and text[j] != CUT and text[i : j + 1] in reference:
            j += 1
        if j > end and copied(text[i:j]):
            found.add(text[i:j])
        end = max(end, j)
    return sorted(found, key=len, reverse=True)


def course_folder() -> Path | None:
    return shared_folder("course")


@cache
def course() -> str:
    folder = course_folder()
    texts = [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))]
    return CUT.join(normal(t) for t in texts)


def lesson_texts(number: int, lang: str) -> dict[str, str]:
    """What a learner reads of lesson ``number`` in ``lang``: the prose file, and the code comments
    (the English comments are the catalogues' keys; ja and zh their values)."""
    folder = resources.files("attnlab.lessons") / "content" / f"lesson{number}"
    texts = {f"{lang}.md": (folder / f"{lang}.md").read_text(encoding="utf-8")}
    catalogue = folder / f"comments.{'ja' if lang == 'en' else lang}.json"
    if catalogue.is_file():
        entries = json.loads(catalogue.read_text(encoding="utf-8"))
        texts["comments"] = "\n".join(entries if lang == "en" else entries.values())
    return texts


def _cases():
    for number in source.lessons():
        for lang in source.languages(number):
            yield pytest.param(number, lang, id=f"lesson{number}-{lang}")


needs_course = pytest.mark.skipif(
    course_folder() is None,
    reason=f"{ROOT.parent / 'shared' / 'course'} is absent (the course texts live beside the repo)",
)


@needs_course
@pytest.mark.parametrize(("number", "lang"), _cases())
def test_no_lesson_shares_a_long_run_with_the_course_texts(number, lang):
    found = []
    for where, text in lesson_texts(number, lang).items():
        found += [
            f"lesson {number} {where}: 「{run}」" for run in shared_runs(normal(text), course())
        ]
    assert not found, "\n".join(found)


def test_the_check_finds_a_copied_sentence_and_lets_terms_and_code_pass():
    reference = normal("「明月」（明るい月）の「明」と「明天」（明日）の「明」は、意味が違います。")
    assert shared_runs(normal("「明月」（明るい月）の「明」と、明日は別です。"), reference)
    assert shared_runs(
        normal("Row i says how much\n  the word takes"), normal("row i says how much")
    )
    # six ideographs are enough; five are not, nor is grammar in kana
    reference = normal("次の文字を予測する学習では、意味が違いますね")
    assert shared_runs(normal("それで次の文字を予測する学習を"), reference) == [
        "次の文字を予測する学習"
    ]
    assert not shared_runs(normal("その次の文字を予測するのが"), reference)
    assert not shared_runs(normal("それは意味が違いますね"), reference)
    # terms, the fixed example and code are cut out of both sides
    term = normal("床前明月光のアテンションとソフトマックス、np.where(mask, scores, -np.inf)")
    assert not shared_runs(term, term)
    assert not shared_runs(normal("`F.scaled_dot_product_attention` と (T, d_model)"), term)
    assert normal("{w[3]:.2f} の重み") == CUT + "の重み"
