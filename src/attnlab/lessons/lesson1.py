"""Lesson 1: attention, from a running average to one full causal head.

Follows the course's ``lesson-attention.txt``: averaging with a lower-triangular matrix, query/key
scoring on the five characters 床前明月光, the causal mask, why scores are divided by sqrt(d),
one complete head checked against PyTorch, and what the T x T score table costs.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .. import ref
from .base import Context, Lesson, Question, Step, Text, fmt_labeled, fmt_matrix, fmt_table

CHARS = list("床前明月光")
# Hand-made 2-D keys: feature 0 = "belongs to the sky", feature 1 = "a place or direction".
KEYS = np.array([[0.1, 0.9], [0.0, 1.0], [0.9, 0.1], [1.0, 0.0], [0.8, 0.2]])
Q_GUANG = np.array([1.0, 0.0])  # 光 looks for sky things


def _heat(ctx: Context, name: str, w: np.ndarray, title: str) -> None:
    from ..viz import heatmap

    labels = CHARS[: w.shape[0]], CHARS[: w.shape[1]]
    axes = {"xlabel": ctx.t("key", "キー"), "ylabel": ctx.t("query", "クエリ")}
    ctx.plot(name, lambda: heatmap(w, *labels, title=title, **axes))


def averaging(ctx: Context) -> dict:
    T = len(CHARS)
    x = ctx.rng().standard_normal((T, 4))  # five characters, a 4-number vector each
    W = ref.causal_mask(T).astype(float)
    W /= W.sum(axis=1, keepdims=True)  # each row: 1 / (number of visible positions)
    out = W @ x
    third = bool(np.allclose(out[2], x[:3].mean(axis=0)))
    ctx.say(
        "Each character averages itself with everything before it. One matrix product does it\n"
        "for all positions at once: a lower-triangular weight matrix whose rows sum to 1.",
        "各文字は、自分とそれより前のすべての文字の平均を取ります。下三角で各行の和が 1 の\n"
        "重み行列を掛ければ、全位置の平均が 1 回の行列積で求まります。",
    )
    ctx.say("weights =\n" + fmt_matrix(W), "重み =\n" + fmt_matrix(W))
    ctx.say(
        f"  out = weights @ x; position 3 ('明') equals the mean of the first three vectors? {third}",
        f"  out = 重み @ x。3 番目（'明'）は最初の 3 ベクトルの平均と等しい？ {third}",
    )
    ctx.say(
        "Row i says how much character i takes from each position. The weakness: every earlier\n"
        "character counts the same. 光 should care about 月, not about 床.",
        "i 行目は、i 番目の文字が各位置からどれだけ受け取るかです。弱点は、前の文字をすべて\n"
        "同じ重さで扱うこと。「光」にとって大事なのは「月」で、「床」ではありません。",
    )
    _heat(ctx, "lesson1_1_average", W, ctx.t("causal average weights", "因果的な平均の重み"))
    return {"weights": W, "third_is_mean": third}


def query_key(ctx: Context) -> dict:
    scores = ref.score(Q_GUANG, KEYS, "dot")
    w = ref.softmax(scores)
    w5 = ref.softmax(5 * scores)
    ctx.say(
        "Give every character a query (what am I looking for?) and a key (what do I offer?).\n"
        "The dot product q . k scores how well they match. Hand-made 2-D keys: feature 0 means\n"
        "'belongs to the sky', feature 1 'a place or direction'. The query of 光 is [1, 0].",
        "各文字にクエリ（何を探しているか）とキー（何を持っているか）を持たせ、内積 q・k で\n"
        "どれだけ合うかを採点します。手作りの 2 次元キーで、0 番目の特徴は「空に関係する」、\n"
        "1 番目は「場所・方向」を表します。「光」のクエリは [1, 0] です。",
    )
    ctx.say("keys =\n" + fmt_matrix(KEYS, 1), "キー =\n" + fmt_matrix(KEYS, 1))
    ctx.say(
        f"  scores of '光' against each character: {fmt_labeled(CHARS, scores)}",
        f"  '光' から各文字へのスコア：           {fmt_labeled(CHARS, scores)}",
    )
    ctx.say(
        f"  weights after softmax:                 {fmt_labeled(CHARS, w)}",
        f"  softmax 後の重み：                     {fmt_labeled(CHARS, w)}",
    )
    ctx.say(
        f"  scores x5, then softmax:               {fmt_labeled(CHARS, w5)}",
        f"  スコアを 5 倍してから softmax：        {fmt_labeled(CHARS, w5)}",
    )
    ctx.say(
        f"月 scores highest and gets the most weight ({w[3]:.2f}). Multiplying the scores by 5\n"
        f"sharpens the softmax: 月 alone now takes {w5[3]:.2f}. The size of the scores decides\n"
        "whether attention spreads out or locks onto one position; remember this for scaling.",
        f"「月」のスコアが最も高く、最大の重み（{w[3]:.2f}）を得ます。スコアを 5 倍すると softmax は\n"
        f"鋭くなり、「月」だけで {w5[3]:.2f} を取ります。スコアの大きさが、注意を広く配るか一点に\n"
        "集中させるかを決めます。スケーリングの節で効いてきます。",
    )
    if ctx.plots is not None:
        from ..viz import bars

        ctx.plot(
            "lesson1_2_scores",
            lambda: bars(
                w,
                CHARS,
                title=ctx.t("weights of 光's query", "「光」のクエリの重み"),
                series={"softmax(scores)": w, "softmax(5 x scores)": w5},
            ),
        )
    return {"scores": scores, "weights": w, "weights_x5": w5}


def causal_mask(ctx: Context) -> dict:
    T, d = 5, 8
    rng = ctx.rng()
    q, k = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    _, w = ref.scaled_dot_product_attention(q, k, k, is_causal=True, return_weights=True)
    ctx.say(
        "During training each position predicts the next character, so it must not see the\n"
        "future. Before the softmax, scores of later positions are set to -inf; exp(-inf) = 0,\n"
        "so their weights become exactly 0. Random q and k (T=5, d=8):",
        "学習では各位置が次の文字を予測するので、未来を見てはいけません。softmax の前に、\n"
        "後ろの位置のスコアを -inf にします。exp(-inf) = 0 なので、その重みはちょうど 0 です。\n"
        "ランダムな q と k（T=5, d=8）で：",
    )
    ctx.say(fmt_matrix(w))
    ctx.say(
        f"  row sums: {np.round(w.sum(axis=1), 6).tolist()}",
        f"  各行の和：{np.round(w.sum(axis=1), 6).tolist()}",
    )
    ctx.say(
        "The same lower-triangular shape as the average, but now each row's weights come from\n"
        "q and k. With random vectors they look arbitrary; training gives them meaning.",
        "平均のときと同じ下三角ですが、各行の重みは q と k で決まります。ランダムなベクトル\n"
        "なので規則性はありません。学習すると意味を持つようになります。",
    )
    _heat(ctx, "lesson1_3_causal", w, ctx.t("causal attention weights", "因果的アテンションの重み"))
    return {"weights": w}


def sqrt_d(ctx: Context) -> dict:
    rows, T = [], 5
    unscaled_max, scaled_max, dims = [], [], (16, 64, 256, 1024)
    for d in dims:
        rng = ctx.rng(d)
        q = rng.standard_normal((400, T, d))  # 400 random sequences of T vectors
        k = rng.standard_normal((400, T, d))
        scores = q @ np.swapaxes(k, -1, -2)  # (400, T, T)
        std = float(scores.std())
        raw = float(ref.softmax(scores).max(axis=-1).mean())
        scaled = float(ref.softmax(scores / math.sqrt(d)).max(axis=-1).mean())
        unscaled_max.append(raw)
        scaled_max.append(scaled)
        rows.append((d, f"{std:.2f}", f"{math.sqrt(d):.2f}", f"{raw:.2f}", f"{scaled:.2f}"))
    ctx.say(
        "A dot product of two random d-dimensional vectors adds d products, so its spread grows\n"
        "like sqrt(d). Large scores make the softmax extreme, exactly like 'scores x5' above:",
        "ランダムな d 次元ベクトルの内積は d 個の積の和なので、ばらつき（標準偏差）は √d の\n"
        "ように大きくなります。スコアが大きいと、上の「5 倍」と同じく softmax が極端になります：",
    )
    header = (
        ("d", "std of q.k", "sqrt(d)", "mean max weight, raw", "after / sqrt(d)")
        if ctx.lang == "en"
        else ("d", "内積の標準偏差", "√d", "各行の最大重みの平均（そのまま）", "√d で割った後")
    )
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "Unscaled, nearly all of a row's attention goes to one position, where the softmax's\n"
        "gradient is almost zero and learning stalls. Dividing by sqrt(d) brings the spread back\n"
        "to about 1, the weights stay spread out, and gradients stay healthy.",
        "割らないと、各行の注意がほぼ一つの位置に集中します。そこでは softmax の勾配がほぼ 0\n"
        "で、学習が進みません。√d で割るとばらつきは 1 前後に戻り、重みは分散し、勾配も健全です。",
    )
    if ctx.plots is not None:
        from ..viz import bars

        ctx.plot(
            "lesson1_4_sqrt_d",
            lambda: bars(
                unscaled_max,
                [f"d={d}" for d in dims],
                title=ctx.t("mean largest weight per row", "各行の最大重みの平均"),
                series={
                    ctx.t("raw", "そのまま"): unscaled_max,
                    ctx.t("/ sqrt(d)", "√d で割る"): scaled_max,
                },
            ),
        )
    return {"dims": dims, "unscaled_max": unscaled_max, "scaled_max": scaled_max}


def _head_inputs(rng: np.random.Generator, T: int = 5, d_model: int = 16, d_head: int = 8):
    """x (T, d_model) and W_q, W_k, W_v (d_model, d_head), float32 as a model would use."""
    x = rng.standard_normal((T, d_model)).astype(np.float32)
    Ws = [
        (rng.standard_normal((d_model, d_head)) / math.sqrt(d_model)).astype(np.float32)
        for _ in range(3)
    ]
    return x, *Ws


def full_head(ctx: Context) -> dict:
    import torch
    import torch.nn.functional as F

    T, d_head = 5, 8
    x, W_q, W_k, W_v = _head_inputs(ctx.rng())
    out, w = ref.self_attention(x, W_q, W_k, W_v, causal=True)
    t = torch.from_numpy
    theirs = F.scaled_dot_product_attention(t(x @ W_q), t(x @ W_k), t(x @ W_v), is_causal=True)
    diff = float(np.abs(out - theirs.numpy()).max())
    ctx.say(
        "Everything together: three matrices turn the input into q, k and v; score, scale, mask,\n"
        "softmax, and take the weighted sum of the values.",
        "すべてをまとめます。三つの行列で入力を q、k、v に変え、採点し、スケーリングし、\n"
        "マスクし、softmax を取り、値の重み付き和を取ります。",
    )
    ctx.say(
        f"  input {x.shape} -> q, k, v each {(T, d_head)} -> output {out.shape}",
        f"  入力 {x.shape} → q、k、v 各 {(T, d_head)} → 出力 {out.shape}",
    )
    ctx.say(
        f"  largest difference from PyTorch's scaled_dot_product_attention (float32): {diff:.1e}",
        f"  PyTorch の scaled_dot_product_attention との最大差（float32）：{diff:.1e}",
    )
    ctx.say(
        "The difference sits in the 7th significant digit: float32 rounding in a different order,\n"
        "not a different formula. This is softmax(Q K^T / sqrt(d)) V from 'Attention Is All You\n"
        "Need' (2017); W_q, W_k and W_v are what the head learns.",
        "差は有効数字 7 桁目で、計算順序の違いによる float32 の丸め誤差です。式は同じ\n"
        "softmax(QKᵀ/√d)V（『Attention Is All You Need』2017 年）です。W_q、W_k、W_v が\n"
        "このヘッドの学習するパラメータです。",
    )
    _heat(ctx, "lesson1_5_head", w, ctx.t("one causal head", "一つの因果的ヘッド"))
    return {"max_diff": diff, "shape": out.shape}


def cost(ctx: Context) -> dict:
    rows = []
    for T in (1_000, 2_000, 4_000, 8_000, 128_000):
        mib = T * T * 4 / 2**20  # float32 scores, one head
        rows.append((f"{T:,}", f"{T * T:,}", f"{mib:,.0f} MiB"))
    ctx.say(
        "Every position scores against every position: the score table is T x T. Double the\n"
        "length and both the work and the table grow 4x. One float32 head:",
        "すべての位置が、すべての位置と採点します。スコア表は T×T です。長さが 2 倍になると、\n"
        "計算量も表の大きさも 4 倍です。float32、ヘッド一つで：",
    )
    header = ("T", "scores", "memory") if ctx.lang == "en" else ("T", "スコアの数", "メモリ")
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "This is why long contexts are expensive. Exact attention that never stores the table\n"
        "exists (online softmax, FlashAttention); the idea is still these few lines.",
        "長いコンテキストが高くつく理由です。表を保存せずに厳密に計算する方法（オンライン\n"
        "softmax、FlashAttention）もありますが、中心にある考えはこの数行のままです。",
    )
    return {"rows": rows}


def exercise_query(ctx: Context) -> dict:
    q = np.array([0.0, 1.0])
    w = ref.softmax(ref.score(q, KEYS, "dot"))
    ctx.say(
        "Change 光's query to [0, 1]: look for places and directions instead of the sky.",
        "「光」のクエリを [0, 1] に替えます。空ではなく、場所や方向を探すクエリです。",
    )
    ctx.say(
        f"  query [1, 0]: {fmt_labeled(CHARS, ref.softmax(ref.score(Q_GUANG, KEYS, 'dot')))}\n"
        f"  query [0, 1]: {fmt_labeled(CHARS, w)}"
    )
    top = [CHARS[i] for i in np.argsort(-w)[:2]]
    ctx.say(
        f"The weight moves to {top[0]} and {top[1]}, whose keys point along feature 1.",
        f"重みは「{top[0]}」と「{top[1]}」に移ります。キーが 1 番目の特徴の方向を向いているからです。",
    )
    return {"weights": w, "top": top}


def exercise_no_mask(ctx: Context) -> dict:
    import torch
    import torch.nn.functional as F

    T = 5
    x, W_q, W_k, W_v = _head_inputs(ctx.rng(section=5))  # section 5's inputs exactly
    out_c, _ = ref.self_attention(x, W_q, W_k, W_v, causal=True)
    out, w = ref.self_attention(x, W_q, W_k, W_v, causal=False)
    t = torch.from_numpy
    theirs = F.scaled_dot_product_attention(t(x @ W_q), t(x @ W_k), t(x @ W_v), is_causal=False)
    diff = float(np.abs(out - theirs.numpy()).max())
    future = int((w[np.triu_indices(T, 1)] > 0).sum())
    same_last = bool(np.allclose(out[-1], out_c[-1], atol=1e-6))
    ctx.say(
        "Section 5's head without the causal mask, against is_causal=False in PyTorch:",
        "5 節のヘッドから因果マスクを外し、PyTorch の is_causal=False と比べます：",
    )
    ctx.say(fmt_matrix(w))
    ctx.say(
        f"  largest difference from PyTorch: {diff:.1e}\n"
        f"  weights above the diagonal that are now non-zero: {future} of {T * (T - 1) // 2}\n"
        f"  last row unchanged by the mask (it saw everything anyway)? {same_last}",
        f"  PyTorch との最大差：{diff:.1e}\n"
        f"  対角より上で 0 でなくなった重み：{T * (T - 1) // 2} 個中 {future} 個\n"
        f"  最後の行はマスクの有無で変わらない（もともと全部見える）？ {same_last}",
    )
    return {"max_diff": diff, "future_nonzero": future, "last_row_same": same_last}


def exercise_timing(ctx: Context) -> dict:
    rng = ctx.rng()
    d = 8
    times = {}
    for T in (1000, 2000, 4000):
        q, k, v = (rng.standard_normal((T, d)).astype(np.float32) for _ in range(3))
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            ref.scaled_dot_product_attention(q, k, v, is_causal=True)
            runs.append(time.perf_counter() - start)
        times[T] = float(np.median(runs))
    ctx.say(
        "Time one causal head (d=8, float32, NumPy) at T = 1000, 2000, 4000 (median of 3 runs):",
        "因果的ヘッド一つ（d=8、float32、NumPy）を T = 1000、2000、4000 で計測（3 回の中央値）：",
    )
    Ts = sorted(times)
    rows = [
        (T, f"{times[T] * 1e3:.1f} ms", "" if i == 0 else f"x{times[T] / times[Ts[i - 1]]:.1f}")
        for i, T in enumerate(Ts)
    ]
    header = ("T", "time", "per doubling") if ctx.lang == "en" else ("T", "時間", "倍にしたとき")
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "Roughly 4x per doubling: the T x T table dominates. (Small T is noisier: fixed costs.)",
        "長さを倍にするとおよそ 4 倍。T×T の表が支配的です（T が小さいと固定費で揺れます）。",
    )
    return {"times": times}


LESSON = Lesson(
    number=1,
    title=Text(
        "Attention, from averaging to a full head", "アテンション：平均から完全なヘッドまで"
    ),
    summary=Text(
        "averaging, query/key scores, causal mask, why divide by sqrt(d), one head vs PyTorch",
        "平均、クエリとキー、因果マスク、√d で割る理由、PyTorch と一致するヘッド",
    ),
    source="lesson-attention.txt",
    intro=Text(
        "The same character can mean different things ('明' in 明月, a bright moon, and 明天,\n"
        "tomorrow); what it means depends on its neighbours. A model that predicts the next\n"
        "character needs a way for each position to gather information from earlier ones.\n"
        "Attention is that way. We build it up from the simplest version, step by step.",
        "同じ文字でも意味は違います（明月の「明」と明天の「明」）。意味は周りの文字で決まります。\n"
        "次の文字を予測するモデルには、各位置が前の位置から情報を集める方法が必要です。\n"
        "それがアテンションです。最も単純な形から一歩ずつ組み立てます。",
    ),
    sections=[
        Step(Text("Averaging with one matrix product", "1 回の行列積で平均を取る"), averaging),
        Step(
            Text("Queries and keys: dot-product scores", "クエリとキー：内積で採点する"), query_key
        ),
        Step(Text("The causal mask: no peeking ahead", "因果マスク：先を覗かない"), causal_mask),
        Step(Text("Why divide by sqrt(d)", "なぜ √d で割るのか"), sqrt_d),
        Step(Text("One full attention head", "完全なアテンションヘッド"), full_head),
        Step(Text("The cost: a T x T table", "代償：T×T の表"), cost),
    ],
    exercises=[
        Step(
            Text("Change 光's query to [0, 1]", "「光」のクエリを [0, 1] に替える"), exercise_query
        ),
        Step(Text("Drop the causal mask", "因果マスクを外す"), exercise_no_mask),
        Step(Text("Time T = 1000, 2000, 4000", "T = 1000、2000、4000 で計測する"), exercise_timing),
    ],
    quiz=[
        Question(
            Text(
                "What do the query, the key and the value each do?",
                "クエリ、キー、値はそれぞれ何をしますか？",
            ),
            Text(
                "The query says what a position is looking for, the key what a position offers.\n"
                "Their dot product scores the match, and the softmax of a row of scores gives the\n"
                "weights. The value is what a position hands over when attended to; the output is\n"
                "the weighted sum of the values.",
                "クエリは「何を探しているか」、キーは「何を持っているか」を表します。両者の内積が\n"
                "一致度のスコアで、行ごとの softmax が重みになります。値は注目されたときに渡す\n"
                "情報で、出力は値の重み付き和です。",
            ),
        ),
        Question(
            Text(
                "How is the causal mask implemented, and why is it needed?",
                "因果マスクはどう実装し、なぜ必要ですか？",
            ),
            Text(
                "Before the softmax, every score of a later position is set to -inf, so its weight\n"
                "becomes 0. The model learns to predict the next character; if it could see that\n"
                "character it would copy it and learn nothing.",
                "softmax の前に、後ろの位置のスコアをすべて -inf にし、重みを 0 にします。モデルは\n"
                "次の文字の予測を学ぶので、その文字が見えると写すだけで何も学べません。",
            ),
        ),
        Question(
            Text("Why are the scores divided by sqrt(d)?", "なぜスコアを √d で割るのですか？"),
            Text(
                "A dot product of d-dimensional vectors has a standard deviation of about sqrt(d).\n"
                "Large scores push the softmax to put almost all weight on one position, where\n"
                "its gradient nearly vanishes. Dividing by sqrt(d) brings the spread back to ~1.",
                "d 次元ベクトルの内積の標準偏差はおよそ √d です。スコアが大きいと softmax は\n"
                "ほぼ全部の重みを一つの位置に乗せ、勾配がほとんど消えます。√d で割ると\n"
                "ばらつきが 1 前後に戻ります。",
            ),
        ),
    ],
)
