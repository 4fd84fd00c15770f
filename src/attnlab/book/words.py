"""The book's own words (everything else on its pages is the lessons' text), in every language."""

from __future__ import annotations

from ..i18n import Text

LANG_NAMES = {"en": "English", "ja": "日本語", "zh": "中文"}
SPHINX_LANG = {"en": "en", "ja": "ja", "zh": "zh_CN"}  # Sphinx's names: search, dates, labels

WORDS = {
    "book": Text("The attention course", "アテンション講座", "注意力课程"),
    "about": Text(
        "Every lesson of attnlab's course as a page: the prose, the code, what the code printed "
        "and drew (computed when this book was built), the exercises with their worked answers "
        "and the quiz. Each page is also a notebook to download and run.",
        "attnlab の講座のすべてのレッスンを 1 ページずつ：説明、コード、コードが出力した数値と図"
        "（この本を作るときに計算したもの）、模範解答つきの練習問題、確認テスト。各ページはダウン"
        "ロードして実行できるノートブックでもあります。",
        "attnlab 课程的每一课各占一页：讲解、代码、代码输出的数字和图（在构建本书时计算）、"
        "带参考答案的练习和小测验。每一页也是一个可以下载并运行的笔记本。",
    ),
    "lessons": Text("Lessons", "レッスン", "课程"),
    "lesson": Text("Lesson {n}", "レッスン {n}", "第 {n} 课"),
    "answer": Text("Answer", "答え", "答案"),
    "languages": Text("Languages", "言語", "语言"),
    "all_languages": Text("all languages", "すべての言語", "所有语言"),
    "playground": Text(
        "Try it: move the query of 光 and watch the weights change.",
        "試してみよう：「光」のクエリを動かして、重みの変化を見ます。",
        "试一试：移动“光”的查询，看权重如何变化。",
    ),
}

__all__ = ["LANG_NAMES", "SPHINX_LANG", "WORDS"]
