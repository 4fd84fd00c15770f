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
    "mistakes": Text("mistakes:", "間違い：", "错误："),
    "passed": Text("PASSED", "合格", "通过"),
    "failed": Text("FAILED", "不合格", "未通过"),
    "pass": Text("PASS", "合格", "通过"),
    "fail": Text("FAIL", "不合格", "未通过"),
    "grader_error": Text(
        "GRADER ERROR (no verdict)", "採点プログラムのエラー（判定なし）", "评分器错误（无结论）"
    ),
    "yours": Text(
        "{name} on {case}: yours | expected (* = wrong cell)",
        "{name}（{case}）：あなたの値 | 期待値（* = 違うセル）",
        "{name}（{case}）：你的值 | 期望值（* = 错误的单元格）",
    ),
    "bwrap": Text("isolation: bwrap sandbox", "隔離：bwrap サンドボックス", "隔离：bwrap 沙箱"),
    "process": Text(
        "isolation: process only (no bwrap): the code ran outside a sandbox, as a user of its "
        "own when grading as root, otherwise with your user's rights",
        "隔離：プロセスのみ（bwrap なし）：コードはサンドボックスの外で実行されました。root で採点した"
        "ときは専用のユーザーとして、それ以外はあなたのユーザー権限で動きました",
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
    "common": Text("most common mistakes: ", "多かった間違い：", "最常见的错误："),
    "not_graded": Text(
        "{k} not graded: internal grader error (see above)",
        "{k} 件は未採点：採点プログラムの内部エラー（上を参照）",
        "{k} 份未评分：评分器内部错误（见上文）",
    ),
    "class_report": Text("Class report", "クラスの採点結果", "班级报告"),
    "scores": Text("Scores", "得点の分布", "得分分布"),
    "submissions": Text("submissions", "提出数", "提交数"),
    "by_frequency": Text("Mistakes by frequency", "多かった間違い", "按频率排列的错误"),
    "mistake": Text("mistake", "間違い", "错误"),
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
    "same answer for the same inputs": ("同じ入力に同じ答え", "相同输入给出相同答案"),
    "leaves NumPy and the grader alone": (
        "NumPy と採点プログラムを書き換えない",
        "不改动 NumPy 和评分器",
    ),
    "inputs left unchanged": ("入力を書き換えない", "输入未被修改"),
    "defines the function": ("関数を定義している", "定义了函数"),
    "finishes in time": ("時間内に終わる", "在时限内完成"),
    "allowed imports": ("許可された import", "允许的 import"),
    "valid Python": ("正しい Python", "合法的 Python"),
    "valid notebook": ("正しいノートブック", "有效的笔记本"),
    "notebook cells": ("ノートブックのセル", "笔记本单元格"),
    "submission runs": ("提出物が動く", "提交能运行"),
    "course example": ("コースの例", "课程示例"),
    "large magnitude": ("大きな値", "大数值"),
    "large scores": ("大きなスコア", "较大的分数"),
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
    "ties": ("同点", "同分"),
    "cross": ("交差", "交叉"),
    "rows at": ("行の値", "各行取值"),
    "scores near": ("スコアが約", "分数约为"),  # before a number: 付近 would trail it
    "near": ("付近", "接近"),
    "runs": ("動く", "能运行"),
    "loads": ("読み込める", "能加载"),
    "and": ("と", "和"),
}
_PARTS = re.compile(
    "|".join(rf"\b{re.escape(p)}\b" for p in sorted(NAME_PARTS, key=len, reverse=True))
)


# The sentences of a check's message (diagnosis.py, parity.py), in ja and zh: each pattern's
# groups (names, numbers, shapes, positions) are kept as they are. Messages stay English in the
# machine formats; the text and HTML reports show them through ``check_message``.
MESSAGES = [
    (
        r"max abs error (\S+) > tolerance (\S+)",
        ("最大絶対誤差 \\1 > 許容誤差 \\2", "最大绝对误差 \\1 > 容差 \\2"),
    ),
    (
        r"; at (\[[^\]]*\]) got ([^\s;]+), expected ([^\s;]+)",
        ("；位置 \\1 の値は \\2（期待値 \\3）", "；位置 \\1 得到 \\2，期望 \\3"),
    ),
    (
        r"(\w+) has NaN/Inf at (\[[^\]]*\]) where the answer is finite",
        (
            "\\1 の \\2 が NaN/Inf です（正解は有限の値）",
            "\\1 在 \\2 处是 NaN/Inf（正确答案是有限值）",
        ),
    ),
    (
        r"(\w+) differs from the expected mask at (\[[^\]]*\])",
        ("\\1 が \\2 で正しいマスクと違います", "\\1 在 \\2 处与正确的掩码不同"),
    ),
    (
        r"(\w+) is (\w+), expected a bool array",
        ("\\1 が \\2 です。bool の配列にしてください", "\\1 是 \\2，应为 bool 数组"),
    ),
    (
        r"(\w+) has shape (\([^)]*\)), expected (\([^)]*\))",
        ("\\1 の形が \\2 です（期待値 \\3）", "\\1 的形状是 \\2，期望 \\3"),
    ),
    (
        r"(\w+): expected a numeric array, got (.+)",
        ("\\1：数値の配列のはずが \\2 でした", "\\1：应为数值数组，实际是 \\2"),
    ),
    (
        r"expected a tuple (\([^)]*\)), got (\w+) of (\d+)",
        (
            "タプル \\1 を返すはずが、要素 \\3 個の \\2 でした",
            "应返回元组 \\1，实际是 \\3 个元素的 \\2",
        ),
    ),
    (
        r"expected a tuple (\([^)]*\)), got (.+)",
        ("タプル \\1 を返すはずが、\\2 でした", "应返回元组 \\1，实际是 \\2"),
    ),
    (
        r"expected one array (\([^)]*\)), got a (.+)",
        ("配列 \\1 を一つ返すはずが、\\2 でした", "应返回一个数组 \\1，实际是 \\2"),
    ),
    (r"still running after (\S+) s", ("\\1 秒たっても終わりません", "\\1 秒后仍在运行")),
    (r"the process died: (.+)", ("プロセスが異常終了しました：\\1", "进程异常终止：\\1")),
    (r"exit code (-?\d+)", ("終了コード \\1", "退出码 \\1")),
    (r" \(signal (\d+)\)", ("（シグナル \\1）", "（信号 \\1）")),
    (
        r"imports (.+), which this exercise forbids",
        ("この練習問題では使えない \\1 を import しています", "导入了本练习禁止使用的 \\1"),
    ),
    (r"imports (.+) at run time", ("実行中に \\1 を import しています", "运行时导入了 \\1")),
    (
        r"no function named (\S+); expected (.+)",
        ("\\1 という関数がありません。必要なのは \\2 です", "没有名为 \\1 的函数；需要的是 \\2"),
    ),
    (r"^raised while loading: (.+)", ("読み込み中に \\1 が発生しました", "加载时抛出了 \\1")),
    (r"^raised (.+)", ("\\1 が発生しました", "抛出了 \\1")),
    (
        r"two calls with the same inputs gave different answers",
        ("同じ入力で 2 回呼ぶと答えが違いました", "相同输入调用两次，答案不同"),
    ),
    (r"; (?=\w+: )", ("；", "；")),  # the next array's message
    (
        r"changed its input\(s\) (.+) in place",
        ("入力 \\1 をその場で書き換えました", "原地修改了输入 \\1"),
    ),
]
_MESSAGES = [(re.compile(p), words) for p, words in MESSAGES]
# the returned arrays a message names, where it names one (its start, or after "；")
ARRAY_NAMES = {
    "output": ("出力", "输出"),
    "weights": ("重み", "权重"),
    "mask": ("マスク", "掩码"),
    "context": ("コンテキスト", "上下文"),
}
_ARRAY_NAME = re.compile(r"(^|；)(output|weights|mask|context)(: |(?=：| の | が | 在 | 的))")
_CASE_FIRST = re.compile(r"(.+?): two calls with the same inputs")


def check_message(message: str, lang: str = "en") -> str:
    """A check's one-line message in ``lang``: its known sentences translated, the names,
    numbers, shapes and positions in them kept."""
    if lang == "en" or not message:
        return message
    i = 0 if lang == "ja" else 1
    case = _CASE_FIRST.match(message)  # "<case name>: two calls ...": the name as in the list
    if case:
        message = check_name(case.group(1), lang) + message[case.end(1) :]
    for pattern, words in _MESSAGES:
        message = pattern.sub(words[i], message)
    return _ARRAY_NAME.sub(lambda m: _array_name(m, i), message)


def _array_name(m: re.Match, i: int) -> str:
    colon = "：" if m.group(3) == ": " else ""
    return m.group(1) + ARRAY_NAMES[m.group(2)][i] + colon


def word(key: str, lang: str = "en", **values) -> str:
    """The report word ``key`` in ``lang``, its fields filled with ``values``."""
    return WORDS[key](lang).format(**values)


def check_name(name: str, lang: str = "en") -> str:
    """A check's name in ``lang``: its known words translated, numbers and shapes kept."""
    if lang == "en":
        return name
    i = 0 if lang == "ja" else 1
    return _PARTS.sub(lambda m: NAME_PARTS[m.group(0)][i], name)


__all__ = ["MESSAGES", "WORDS", "check_message", "check_name", "word"]
