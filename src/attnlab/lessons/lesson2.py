"""Lesson 2: masked self-attention in NumPy only (the course's mini project).

Follows ``miniproject-self-attention-numpy.txt``: X is 3 x 2, Q = X W_Q, K = X W_K, V = X W_V,
the 3 x 3 score table, the np.tril mask, a row-wise softmax (and what goes wrong without
keepdims), masked and unmasked weights, and the check against PyTorch on random inputs.
The inputs below reproduce the course's example weight tables exactly.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ref
from .base import Context, Lesson, Question, Step, Text, fmt_matrix, fmt_table

X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # three words, 2 numbers each
W_Q = np.array([[1.0, 0.0], [2.0, 2.0]])
W_K = np.eye(2)
W_V = np.array([[0.5, 1.0], [1.5, -1.0]])


def _words(ctx: Context) -> list[str]:
    return [ctx.t(f"word {i}", f"{i}語目") for i in (1, 2, 3)]


def _qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return X @ W_Q, X @ W_K, X @ W_V


def projections(ctx: Context) -> dict:
    Q, K, V = _qkv()
    ctx.say(
        "The input X holds three word vectors (3 rows x 2 columns). Three weight matrices turn\n"
        "it into queries, keys and values: Q = X W_Q, K = X W_K, V = X W_V.",
        "入力 X は 3 語の埋め込みベクトル（3 行 × 2 列）です。三つの重み行列で、クエリ・キー・\n"
        "バリューを作ります：Q = X W_Q、K = X W_K、V = X W_V。",
    )
    for name, m in (
        ("X", X),
        ("W_Q", W_Q),
        ("W_K", W_K),
        ("W_V", W_V),
        ("Q", Q),
        ("K", K),
        ("V", V),
    ):
        ctx.say(f"{name} =\n{fmt_matrix(m, 1)}")
    return {"Q": Q, "K": K, "V": V}


def score_table(ctx: Context) -> dict:
    Q, K, _ = _qkv()
    d = K.shape[1]
    raw = Q @ K.T
    scores = raw / math.sqrt(d)
    ctx.say(
        f"Every pair of words gets a score: Q K^T / sqrt(d) with d = {d}. Row i is how much\n"
        "word i likes each word (3 x 3):",
        f"すべての単語の組に点数をつけます：Q Kᵀ / √d（d = {d}）。i 行目は、i 語目が各単語に\n"
        "どれだけ注目したいか（3 × 3）：",
    )
    ctx.say("Q K^T =\n" + fmt_matrix(raw, 1))
    ctx.say("Q K^T / sqrt(d) =\n" + fmt_matrix(scores, 3))
    return {"scores": scores}


def mask_table(ctx: Context) -> dict:
    Q, K, _ = _qkv()
    scores = Q @ K.T / math.sqrt(K.shape[1])
    mask = np.tril(np.ones((3, 3), dtype=bool))
    words = _words(ctx)
    header = ["", *[ctx.t(f"sees {w}", f"{w}を見る") for w in words]]
    rows = [[words[i], *["○" if m else "×" for m in mask[i]]] for i in range(3)]
    masked = np.where(mask, scores, -np.inf)
    ctx.say(
        "np.tril keeps the lower-left triangle, diagonal included. ○ may be used, × may not:",
        "np.tril は左下（対角線を含む）だけを残します。○ は使える位置、× は使えない位置：",
    )
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "np.where(mask, scores, -np.inf) puts -inf at every ×; since e^-inf = 0, those weights\n"
        "will be exactly 0:",
        "np.where(mask, scores, -np.inf) で × の位置を -inf にします。e^-inf = 0 なので、\n"
        "その重みはちょうど 0 になります：",
    )
    ctx.say(fmt_matrix(masked, 3))
    return {"mask": mask, "masked_scores": masked}


def keepdims(ctx: Context) -> dict:
    Q, K, _ = _qkv()
    scores = Q @ K.T / math.sqrt(K.shape[1])
    e = np.exp(scores - scores.max(axis=1, keepdims=True))  # subtract each row's max
    right = e / e.sum(axis=1, keepdims=True)  # (3, 3) / (3, 1): each row by its own sum
    wrong = e / e.sum(axis=1)  # (3, 3) / (3,): column j divided by row j's sum
    ctx.say(
        "Each row is one word's view, so the softmax runs along each row (axis=1). The row sums\n"
        "must keep their shape (3, 1) with keepdims=True so that every row divides by its own sum:",
        "各行が一つの単語の見方なので、softmax は行ごと（axis=1）に取ります。行ごとの和は\n"
        "keepdims=True で形 (3, 1) を保ち、各行が自分の和で割られるようにします：",
    )
    ctx.say("keepdims=True  ->\n" + fmt_matrix(right, 3))
    ctx.say(f"  {ctx.t('row sums', '各行の和')}: {np.round(right.sum(1), 3).tolist()}")
    ctx.say(
        "Without keepdims the sums have shape (3,), broadcasting lines them up with the columns,\n"
        "and column j is divided by row j's sum:",
        "keepdims がないと和は形 (3,) になり、ブロードキャストで列に並んでしまい、\n"
        "j 列目が j 行目の和で割られます：",
    )
    ctx.say("keepdims=False ->\n" + fmt_matrix(wrong, 3))
    ctx.say(
        f"  {ctx.t('row sums', '各行の和')}: {np.round(wrong.sum(1), 3).tolist()}  "
        + ctx.t("<- not 1: silently wrong, no error raised", "← 1 ではない：エラーも出ずに間違う")
    )
    return {"right": right, "wrong": wrong}


def weights_tables(ctx: Context) -> dict:
    _, w_plain = ref.self_attention(X, W_Q, W_K, W_V, causal=False)
    out, w_mask = ref.self_attention(X, W_Q, W_K, W_V, causal=True)
    words = _words(ctx)
    header = [
        "",
        ctx.t("weights, no mask", "マスクなしの重み"),
        ctx.t("weights, masked", "マスクありの重み"),
    ]
    rows = [
        [
            words[i],
            " · ".join(f"{x:.3f}" for x in w_plain[i]),
            " · ".join(f"{x:.3f}" for x in w_mask[i]),
        ]
        for i in range(3)
    ]
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "With the mask, word 1 sees only itself and word 2 only words 1 and 2. Word 3 is the\n"
        "same both ways: everything is already at or before it. Every row sums to 1.",
        "マスクありでは、1 語目は自分だけ、2 語目は 1 語目と自分だけに注目します。3 語目は\n"
        "もともと全部が自分以前なので、マスクの有無で変わりません。どの行も合計は 1 です。",
    )
    ctx.say(
        ctx.t("output = weights @ V (masked) =", "出力 = 重み @ V（マスクあり）=")
        + "\n"
        + fmt_matrix(out, 3)
    )
    if ctx.plots is not None:
        from ..viz import heatmap

        ctx.plot(
            "lesson2_5_unmasked",
            lambda: heatmap(w_plain, words, words, title=ctx.t("no mask", "マスクなし")),
        )
        ctx.plot(
            "lesson2_5_masked",
            lambda: heatmap(w_mask, words, words, title=ctx.t("masked", "マスクあり")),
        )
    return {"unmasked": w_plain, "masked": w_mask}


def against_torch(ctx: Context) -> dict:
    import torch
    import torch.nn.functional as F

    rng = ctx.rng()
    rows, worst = [], 0.0
    for trial in range(1, 4):
        T, d = int(rng.integers(2, 7)), int(rng.integers(2, 9))
        Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
        for causal in (False, True):
            ours = ref.scaled_dot_product_attention(Q, K, V, is_causal=causal)
            theirs = F.scaled_dot_product_attention(
                *(torch.from_numpy(a) for a in (Q, K, V)), is_causal=causal
            )
            diff = float(np.abs(ours - theirs.numpy()).max())
            worst = max(worst, diff)
            rows.append(
                (
                    trial,
                    f"T={T}, d={d}",
                    ctx.t("yes", "あり") if causal else ctx.t("no", "なし"),
                    f"{diff:.1e}",
                )
            )
    header = (
        ("trial", "shape", "mask", "max |NumPy - PyTorch|")
        if ctx.lang == "en"
        else ("試行", "形", "マスク", "最大 |NumPy - PyTorch|")
    )
    ctx.say(
        "The same computation as PyTorch's F.scaled_dot_product_attention. Random queries, keys\n"
        "and values, with and without the mask (float64):",
        "PyTorch の F.scaled_dot_product_attention と同じ計算です。ランダムなクエリ・キー・\n"
        "バリューで、マスクあり・なしの両方を比べます（float64）：",
    )
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "Your turn: 'attnlab exercise start self_attention' writes a starter file, and\n"
        "'attnlab grade FILE' checks your function the same way and names any mistake.",
        "次はあなたの番です。'attnlab exercise start self_attention' で雛形のファイルを作り、\n"
        "'attnlab grade FILE' で同じように確かめ、間違いがあれば名前を示します。",
    )
    return {"max_diff": worst}


MODELS = [
    (
        Text("RNN", "RNN"),
        Text(
            "folds the past into one hidden state, step by step",
            "過去を一つの隠れ状態に順に畳み込む",
        ),
        Text("simple; short sequences", "単純。短い系列"),
        Text(
            "gradients vanish or explode on long sequences; strictly sequential",
            "長い系列で勾配が消失・爆発する。逐次計算のみ",
        ),
    ),
    (
        Text("LSTM / GRU", "LSTM・GRU"),
        Text("gates decide what to keep, forget and emit", "ゲートで保持・忘却・出力を調節する"),
        Text("longer sequences than a plain RNN", "RNN より長い系列"),
        Text("harder to tune; still sequential", "調整が難しいことがある。逐次計算のみ"),
    ),
    (
        Text("seq2seq + attention", "seq2seq + アテンション"),
        Text(
            "the decoder chooses where to look in the input at every step",
            "デコーダが毎ステップ入力のどこを見るか選ぶ",
        ),
        Text("translation, summarisation", "翻訳・要約"),
        Text("its RNN parts are still sequential", "RNN の部分は逐次計算のまま"),
    ),
    (
        Text("Transformer", "Transformer"),
        Text(
            "self-attention looks at every position at once", "自己アテンションで全位置を同時に見る"
        ),
        Text("long context, big data, parallel training", "長い文脈、大量データ、並列学習"),
        Text("cost grows with the square of the length", "計算量が系列長の 2 乗で増える"),
    ),
]


def comparison(ctx: Context) -> dict:
    header = (
        ("model", "how it uses the past", "good at", "weak at")
        if ctx.lang == "en"
        else ("モデル", "過去の情報の使い方", "得意なこと", "弱点")
    )
    ctx.say(fmt_table(header, [[c(ctx.lang) for c in row] for row in MODELS]))
    ctx.say(
        "'attnlab compare lm' trains these side by side and fills the table with measured numbers.",
        "'attnlab compare lm' でこれらを同じ条件で学習し、表を実測値で埋められます。",
    )
    return {}


LESSON = Lesson(
    number=2,
    title=Text("Self-attention in NumPy only", "NumPy だけで自己アテンション"),
    summary=Text(
        "the mini project: Q/K/V, score table, np.tril mask, row softmax and keepdims, vs PyTorch",
        "ミニプロジェクト：Q/K/V、スコア表、np.tril のマスク、行ごとの softmax と keepdims、PyTorch との一致",
    ),
    source="miniproject-self-attention-numpy.txt",
    intro=Text(
        "Masked self-attention, the heart of the Transformer, built with NumPy alone on a tiny\n"
        "example you can check by hand: three words with two numbers each.",
        "Transformer の心臓部であるマスク付き自己アテンションを、NumPy だけで作ります。\n"
        "手で確かめられる小さな例：2 個の数からなる 3 語です。",
    ),
    sections=[
        Step(Text("Queries, keys and values", "クエリ・キー・バリュー"), projections),
        Step(Text("The score table", "点数の表"), score_table),
        Step(Text("The mask table", "マスクの表"), mask_table),
        Step(Text("Row-wise softmax and keepdims", "行ごとのソフトマックスと keepdims"), keepdims),
        Step(Text("Weights with and without the mask", "マスクあり・なしの重み"), weights_tables),
        Step(Text("Check against PyTorch", "PyTorch と比べて確かめる"), against_torch),
        Step(Text("How the sequence models compare", "系列モデルの比較"), comparison),
    ],
    quiz=[
        Question(
            Text(
                "Why does the softmax run along axis=1 here?",
                "ここで softmax を axis=1 で取るのはなぜですか？",
            ),
            Text(
                "Row i holds word i's scores for every word; its weights must sum to 1 over that row.",
                "i 行目は i 語目から各単語へのスコアで、その行の中で重みの和が 1 になる必要があるからです。",
            ),
        ),
        Question(
            Text(
                "What goes wrong without keepdims=True?", "keepdims=True がないと何が起きますか？"
            ),
            Text(
                "The row sums become a flat (3,) array; broadcasting divides column j by row j's\n"
                "sum, so the rows no longer sum to 1 and no error is raised.",
                "行の和が平らな (3,) の配列になり、ブロードキャストで j 列目が j 行目の和で割られます。\n"
                "行の和が 1 にならず、しかもエラーは出ません。",
            ),
        ),
        Question(
            Text(
                "Why is word 3 unchanged by the causal mask?",
                "3 語目が因果マスクで変わらないのはなぜですか？",
            ),
            Text(
                "It is the last word: every position is at or before it, so the mask hides nothing.",
                "最後の単語なので、すべての位置が自分以前にあり、マスクが隠すものがないからです。",
            ),
        ),
    ],
)
