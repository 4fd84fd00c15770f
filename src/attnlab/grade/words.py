"""The words of a grading report in each language, and check names shown in the learner's.

Check names stay English in the machine formats (JSON, JUnit, CSV, Gradescope), where they are
identifiers; the text and HTML reports show them through ``check_name``.
"""

from __future__ import annotations

import re

from ..i18n import Text

WORDS = {
    "checks_passed": Text("checks passed", "チェック合格", "项检查通过"),
    "score": Text("score", "得点", "得分"),
    "seed": Text("seed", "シード", "种子"),
    "printed": Text("printed output:", "print の出力：", "打印的输出："),
    "mistakes": Text("mistakes:", "ミス：", "错误："),
    "passed": Text("PASSED", "合格", "通过"),
    "failed": Text("FAILED", "不合格", "未通过"),
    "pass": Text("PASS", "合格", "通过"),
    "fail": Text("FAIL", "不合格", "失败"),
    "grader_error": Text(
        "GRADER ERROR (no verdict)", "採点器のエラー（判定なし）", "评分器错误（无结论）"
    ),
    "yours": Text(
        "{name} on {case}: yours | expected (* = wrong cell)",
        "{name}（{case}）：あなたの値 | 期待値（* = 違うセル）",
        "{name}（{case}）：你的 | 期望值（* = 错误的单元格）",
    ),
    "bwrap": Text("isolation: bwrap sandbox", "隔離：bwrap サンドボックス", "隔离：bwrap 沙箱"),
    "process": Text(
        "isolation: process only (no bwrap): the code ran outside a sandbox, as a user of its "
        "own when grading as root, otherwise with your user's rights",
        "隔離：プロセスのみ（bwrap なし）：コードはサンドボックスの外で実行されました。root で採点した"
        "ときは専用のユーザーとして、それ以外はあなたのユーザー権限で動いています",
        "隔离：仅进程（没有 bwrap）：代码在沙箱之外运行；以 root 评分时使用专门的用户，否则以你的用户权限运行",
    ),
    "in-process": Text(
        "ran in this process (your own code, on your own machine)",
        "このプロセスで実行（自分のマシンで自分のコード）",
        "在本进程中运行（你自己的代码，在你自己的机器上）",
    ),
    "rate": Text(
        "{passed}/{n} submissions passed ({share:.0%})",
        "{n} 件中 {passed} 件が合格（{share:.0%}）",
        "{n} 份提交中 {passed} 份通过（{share:.0%}）",
    ),
    "none": Text("no submissions", "提出なし", "没有提交"),
    "common": Text("most common mistakes: ", "多かったミス：", "最常见的错误："),
    "not_graded": Text(
        "{k} not graded: internal grader error (see above)",
        "{k} 件は未採点：採点器の内部エラー（上を参照）",
        "{k} 份未评分：评分器内部错误（见上文）",
    ),
    "class_report": Text("Class report", "クラスの採点結果", "班级报告"),
    "scores": Text("Scores", "得点の分布", "得分分布"),
    "submissions": Text("submissions", "提出数", "提交数"),
    "by_frequency": Text("Mistakes by frequency", "多かったミス", "按频率排列的错误"),
    "mistake": Text("mistake", "ミス", "错误"),
    "hint": Text("hint", "ヒント", "提示"),
    "line_here": Text(
        "line {n}, where its values first go wrong:",
        "{n} 行目（ここで値が最初に正しい計算から外れます）：",
        "第 {n} 行（数值从这里开始偏离正确的计算）：",
    ),
    "line_unmasked": Text(
        "line {n}: the scores reach this line without the mask applied to them first:",
        "{n} 行目：スコアがマスクを通らないまま、この行で使われています：",
        "第 {n} 行：分数没有先经过掩码，就在这一行被使用了：",
    ),
    "gradebook": Text("Gradebook", "成績表", "成绩册"),
    "student": Text("student", "学生", "学生"),
}

# The pieces check names are made of (exercises.py, grader.py), longest first when applied.
NAME_PARTS = {
    "leaves NumPy and the grader alone": ("NumPy と採点器を書き換えない", "不改动 NumPy 和评分器"),
    "inputs left unchanged": ("入力を書き換えない", "输入未被修改"),
    "defines the function": ("関数を定義している", "定义了函数"),
    "finishes in time": ("時間内に終わる", "按时完成"),
    "allowed imports": ("許可された import", "允许的 import"),
    "valid Python": ("正しい Python", "合法的 Python"),
    "valid notebook": ("正しいノートブック", "有效的笔记本"),
    "notebook cells": ("ノートブックのセル", "笔记本单元格"),
    "submission runs": ("提出物が動く", "提交能运行"),
    "course example": ("コースの例", "课程示例"),
    "large magnitude": ("大きな値", "大数值"),
    "large scores": ("大きなスコア", "大分数"),
    "all scores equal": ("スコアがすべて等しい", "分数全部相等"),
    "equal scores": ("等しいスコア", "分数相等"),
    "one key and query": ("キーとクエリが一つ", "一个键和一个查询"),
    "one column": ("1 列", "一列"),
    "one row": ("1 行", "一行"),
    "scores": ("スコア", "分数"),
    "unmasked": ("マスクなし", "无掩码"),
    "masked": ("マスクあり", "有掩码"),
    "random": ("ランダム", "随机"),
    "fixed": ("固定", "固定"),
    "ties": ("同点", "并列"),
    "cross": ("交差", "交叉"),
    "rows at": ("行の値", "行的值"),
    "near": ("付近", "附近"),
    "runs": ("動く", "能运行"),
    "loads": ("読み込める", "能加载"),
    "and": ("と", "和"),
}
_PARTS = re.compile(
    "|".join(rf"\b{re.escape(p)}\b" for p in sorted(NAME_PARTS, key=len, reverse=True))
)


def word(key: str, lang: str = "en", **values) -> str:
    """The report word ``key`` in ``lang``, its fields filled with ``values``."""
    return WORDS[key](lang).format(**values)


def check_name(name: str, lang: str = "en") -> str:
    """A check's name in ``lang``: its known words translated, numbers and shapes kept."""
    if lang == "en":
        return name
    i = 0 if lang == "ja" else 1
    return _PARTS.sub(lambda m: NAME_PARTS[m.group(0)][i], name)


__all__ = ["WORDS", "check_name", "word"]
