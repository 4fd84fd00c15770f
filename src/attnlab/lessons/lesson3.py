"""Lesson 3: multi-head attention and positional encoding.

Follows ``article-attention-mechanism.txt``: one d_model projection split into h heads by a
reshape, the match with ``torch.nn.MultiheadAttention``, choosing h, why self-attention needs
positions (it is permutation-equivariant), and the sinusoidal encoding and its properties.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ref
from ..oracles import torch_mha
from .base import Context, Lesson, Question, Step, Text, fmt_matrix, fmt_table


def _mha_weights(rng: np.random.Generator, d_model: int) -> list[np.ndarray]:
    return [rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(4)]


def split_heads(ctx: Context) -> dict:
    import torch

    T, d_model, h = 10, 512, 8
    d_k = d_model // h
    rng = ctx.rng()
    x = rng.standard_normal((1, T, d_model))
    W_q, W_k, W_v, W_o = _mha_weights(rng, d_model)
    Q = x @ W_q
    heads = ref.split_heads(Q, h)
    ctx.say(
        "Multi-head attention does not keep h separate sets of weights. It makes one big Q (and\n"
        "K, V) of width d_model and cuts it into h slices of width d_k = d_model / h:",
        "マルチヘッドアテンションは h 組の別々の重みを持つのではありません。幅 d_model の大きな\n"
        "Q（と K、V）を一つ作り、幅 d_k = d_model / h の h 本に切り分けます：",
    )
    ctx.say(
        f"  d_model = {d_model}, h = {h} -> d_k = {d_k}\n"
        f"  Q {Q.shape[1:]} -> reshape {(T, h, d_k)} -> transpose {heads.shape[1:]}  (T, h, d_k) -> (h, T, d_k)"
    )
    out, w = ref.multi_head_attention(x, x, x, W_q, W_k, W_v, W_o, h)
    with torch.no_grad():
        theirs, _ = torch_mha(x, x, x, W_q, W_k, W_v, W_o, h)
    diff = float(np.abs(out - theirs.numpy()).max())
    ctx.say(
        "Each head runs scaled dot-product attention on its slice; the h outputs are joined side\n"
        "by side back to d_model and mixed by W_o. Same weights in torch.nn.MultiheadAttention:",
        "各ヘッドが自分の切れ端で scaled dot-product attention を計算し、h 個の出力を横に\n"
        "つないで d_model に戻し、W_o で混ぜます。同じ重みを torch.nn.MultiheadAttention に入れると：",
    )
    ctx.say(
        f"  output {out.shape}, weights {w.shape}; max |attnlab - torch| = {diff:.1e} (float64)",
        f"  出力 {out.shape}、重み {w.shape}。最大 |attnlab - torch| = {diff:.1e}（float64）",
    )
    if ctx.plots is not None:
        from ..viz import head_grid

        ctx.plot(
            "lesson3_1_heads",
            lambda: head_grid(
                w[:, :h],
                title=ctx.t("8 heads, random weights", "8 ヘッド（ランダムな重み）"),
                row_name="batch",
            ),
        )
    return {"max_diff": diff, "d_k": d_k}


def choosing_h(ctx: Context) -> dict:
    d_model, T = 512, 1000
    rows = []
    for h in (1, 2, 4, 8, 16, 32, 64):
        d_k = d_model // h
        flops = 2 * h * T * T * d_k  # Q K^T over all heads
        rows.append((h, d_k, f"{flops / 1e9:.2f}"))
    ctx.say(
        "h is a choice (a hyperparameter), taken among the divisors of d_model so that d_k is a\n"
        f"whole number. The score work over all heads stays the same (T = {T}):",
        "h は人が決めるハイパーパラメータで、d_k が整数になるよう d_model の約数から選びます。\n"
        f"全ヘッドの採点の計算量は h によらず一定です（T = {T}）：",
    )
    header = ("h", "d_k", "GFLOP for Q K^T") if ctx.lang == "en" else ("h", "d_k", "Q Kᵀ の GFLOP")
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "More heads means more views of the sequence, each thinner. Too many and each head's d_k\n"
        "is too small to hold much; 8 to 16 heads is the common choice.",
        "ヘッドを増やすと見方が増えますが、一つ一つは細くなります。増やしすぎると各ヘッドの\n"
        "d_k が小さくなりすぎます。8〜16 が定番です。",
    )
    return {"rows": rows}


def permutation(ctx: Context) -> dict:
    T, d_model, h = 6, 16, 4
    rng = ctx.rng()
    x = rng.standard_normal((T, d_model))
    Ws = _mha_weights(rng, d_model)
    perm = rng.permutation(T)
    out, _ = ref.multi_head_attention(x, x, x, *Ws, h)
    out_p, _ = ref.multi_head_attention(x[perm], x[perm], x[perm], *Ws, h)
    plain = float(np.abs(out_p - out[perm]).max())
    pe = ref.sinusoidal_positional_encoding(T, d_model)
    y, yp = x + pe, x[perm] + pe  # positions stay in place, the words move
    out2, _ = ref.multi_head_attention(y, y, y, *Ws, h)
    out2_p, _ = ref.multi_head_attention(yp, yp, yp, *Ws, h)
    with_pe = float(np.abs(out2_p - out2[perm]).max())
    ctx.say(
        f"Shuffle the {T} input vectors (order {perm.tolist()}) and self-attention's outputs are the\n"
        "same vectors, shuffled the same way: it cannot tell order at all.",
        f"{T} 個の入力ベクトルを並べ替える（順番 {perm.tolist()}）と、自己アテンションの出力も\n"
        "同じベクトルが同じように並べ替わるだけです。順序がまったく分かりません。",
    )
    ctx.say(
        f"  max |attn(shuffled x) - shuffled attn(x)| = {plain:.1e}\n"
        f"  {ctx.t('same, after adding positional encodings', '位置エンコーディングを足した後')}: {with_pe:.2f}"
    )
    ctx.say(
        "'dog bites man' and 'man bites dog' would look alike. Adding a position signal to each\n"
        "input breaks the symmetry.",
        "これでは「犬が人をかむ」と「人が犬をかむ」が区別できません。各入力に位置の信号を足すと\n"
        "対称性が崩れます。",
    )
    return {"equivariance_error": plain, "with_pe": with_pe}


def sinusoidal(ctx: Context) -> dict:
    T, d = 50, 64
    pe = ref.sinusoidal_positional_encoding(T, d)
    ctx.say(
        "PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).\n"
        "Each column pair turns at its own speed: fast on the left, very slow on the right.",
        "PE[pos, 2i] = sin(pos / 10000^(2i/d))、PE[pos, 2i+1] = cos(pos / 10000^(2i/d))。\n"
        "列の組ごとに回る速さが違い、左ほど速く、右ほどゆっくり回ります。",
    )
    ctx.say(f"PE[0:4, 0:6] (T={T}, d={d}) =\n" + fmt_matrix(pe[:4, :6], 3))
    if ctx.plots is not None:
        from ..viz import heatmap

        ctx.plot(
            "lesson3_4_positional",
            lambda: heatmap(
                pe,
                title=ctx.t("sinusoidal positional encoding", "正弦波の位置エンコーディング"),
                xlabel=ctx.t("dimension", "次元"),
                ylabel=ctx.t("position", "位置"),
                vmin=-1,
                vmax=1,
                cmap="RdBu",
                annotate=False,
            ),
        )
    return {"pe": pe}


def _rotation(k: int, d: int) -> np.ndarray:
    M = np.zeros((d, d))
    for i, w in enumerate(10000.0 ** (-np.arange(0, d, 2) / d)):
        c, s = math.cos(k * w), math.sin(k * w)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return M


def shift_is_linear(ctx: Context) -> dict:
    d, k = 16, 3
    pe = ref.sinusoidal_positional_encoding(200, d)
    fit, *_ = np.linalg.lstsq(pe[:100], pe[k : 100 + k], rcond=None)
    residual = float(np.abs(pe[:100] @ fit - pe[k : 100 + k]).max())
    exact = float(np.abs(pe[:100] @ _rotation(k, d) - pe[k : 100 + k]).max())
    dots = [float(pe[p] @ pe[p + k]) for p in (0, 10, 50)]
    ctx.say(
        f"For a fixed offset k, PE[pos + k] is a linear function of PE[pos]. Fit one matrix M on\n"
        f"positions 0..99 (k = {k}, d = {d}) by least squares:",
        f"固定したずれ k について、PE[pos + k] は PE[pos] の線形関数です。位置 0〜99 で行列 M を\n"
        f"最小二乗法で当てはめます（k = {k}、d = {d}）：",
    )
    ctx.say(
        f"  max |PE[pos] M - PE[pos + k]| = {residual:.1e}\n"
        f"  {ctx.t('the exact M: a 2x2 rotation per column pair, error', '厳密な M（列の組ごとの 2×2 回転）の誤差')} = {exact:.1e}\n"
        f"  PE[p] . PE[p + {k}] for p = 0, 10, 50: {[round(x, 6) for x in dots]}"
    )
    ctx.say(
        "The dot product between two positions depends only on their distance, which makes\n"
        "relative offsets easy for attention to read.",
        "二つの位置の内積は距離だけで決まります。だからアテンションは相対的な位置を読み取りやすいのです。",
    )
    return {"residual": residual, "exact": exact, "dots": dots}


def beyond(ctx: Context) -> dict:
    d, k = 16, 3
    pe = ref.sinusoidal_positional_encoding(1100, d)
    far = float(np.abs(pe[1000:1090] @ _rotation(k, d) - pe[1000 + k : 1090 + k]).max())
    ctx.say(
        "The formula has no maximum length: position 1000 gets an encoding like any other, in\n"
        "[-1, 1], and the same rotation M_k that shifts position 0 to k shifts 1000 to 1000 + k:",
        "式に最大長はありません。位置 1000 も他と同じく [-1, 1] の符号化を持ち、位置 0 を k に\n"
        "ずらすのと同じ回転 M_k が、1000 を 1000 + k にずらします：",
    )
    ctx.say(
        f"  max |PE[1000..1089] M_k - PE[1003..1092]| = {far:.1e};  "
        f"min, max of PE[1000] = {pe[1000].min():.3f}, {pe[1000].max():.3f}"
    )
    ctx.say(
        "A learned position table (GPT-2 style) has no row beyond its training length at all.\n"
        "Whether a model uses the far positions well is a separate, empirical question.",
        "学習する位置の表（GPT-2 方式）には、学習時の長さより先の行がそもそもありません。\n"
        "モデルが遠い位置をうまく使えるかは、別の実験的な問題です。",
    )
    return {"far_error": far}


LESSON = Lesson(
    number=3,
    title=Text(
        "Multi-head attention and positional encoding",
        "マルチヘッドアテンションと位置エンコーディング",
    ),
    summary=Text(
        "heads by reshape, equal to torch.nn.MultiheadAttention, choosing h, permutation, sinusoids",
        "reshape によるヘッド分割、torch.nn.MultiheadAttention との一致、h の選び方、並べ替え、正弦波",
    ),
    source="article-attention-mechanism.txt",
    intro=Text(
        "One head gives one view of the sequence. Several heads look from several angles at the\n"
        "same cost. And since attention alone ignores order, positions must be added.",
        "一つのヘッドは系列の一つの見方です。複数のヘッドなら同じコストで複数の角度から見られます。\n"
        "また、アテンションだけでは順序が分からないので、位置を加える必要があります。",
    ),
    sections=[
        Step(
            Text("Splitting one projection into heads", "一つの射影をヘッドに分ける"), split_heads
        ),
        Step(Text("Choosing the number of heads", "ヘッド数の決め方"), choosing_h),
        Step(Text("Attention ignores order", "アテンションは順序を無視する"), permutation),
        Step(Text("The sinusoidal encoding", "正弦波の位置エンコーディング"), sinusoidal),
        Step(Text("A shift is a linear map", "ずらしは線形写像"), shift_is_linear),
        Step(Text("Beyond the trained length", "学習した長さの先"), beyond),
    ],
    quiz=[
        Question(
            Text(
                "How are the heads made from one d_model projection?",
                "一つの d_model の射影からヘッドをどう作りますか？",
            ),
            Text(
                "Reshape (T, d_model) to (T, h, d_k) and move h to the front: head i owns columns\n"
                "i*d_k to (i+1)*d_k of W_q, W_k and W_v.",
                "(T, d_model) を (T, h, d_k) に reshape し、h を前に出します。ヘッド i は W_q、W_k、\n"
                "W_v の i*d_k〜(i+1)*d_k 列を受け持ちます。",
            ),
        ),
        Question(
            Text(
                "Why does self-attention need positional information?",
                "自己アテンションに位置情報が必要なのはなぜですか？",
            ),
            Text(
                "It is permutation-equivariant: shuffling the inputs only shuffles the outputs, so\n"
                "without positions word order is invisible.",
                "並べ替えに対して同変で、入力を並べ替えても出力が並べ替わるだけなので、位置がなければ\n"
                "語順が見えないからです。",
            ),
        ),
        Question(
            Text(
                "Why can PE[pos + k] be written as a linear function of PE[pos]?",
                "PE[pos + k] が PE[pos] の線形関数で書けるのはなぜですか？",
            ),
            Text(
                "Each (sin, cos) pair is a point on a circle; moving k positions rotates every pair\n"
                "by an angle that depends on k alone, and a rotation is a linear map.",
                "各 (sin, cos) の組は円周上の点で、k だけずらすと各組が k だけで決まる角度だけ回転します。\n"
                "回転は線形写像です。",
            ),
        ),
    ],
)
