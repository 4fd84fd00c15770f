"""Lesson 4: attention in seq2seq models, Bahdanau vs Luong.

Follows ``lesson-8-attention-seq2seq.txt`` and the article: the fixed-context bottleneck, score
functions side by side, where each variant takes its query, the family of attention types, and
self-attention weights for "sat" in "The cat sat on the mat" from hand-made vectors.
"""

from __future__ import annotations

import numpy as np

from .. import ref
from .base import Context, Lesson, Question, Step, Text, fmt_matrix, fmt_table

SOURCE = ["je", "suis", "un", "chat"]  # a tiny source sentence for the encoder states


def _states(rng: np.random.Generator, S: int = 4, d: int = 3):
    enc = rng.standard_normal((S, d))  # encoder hidden states, one per source word
    dec = rng.standard_normal((3, d))  # decoder states at three output steps
    return enc, dec


def bottleneck(ctx: Context) -> dict:
    enc, dec = _states(ctx.rng())
    fixed = enc[-1]  # without attention: the last encoder state is all the decoder gets
    contexts = np.stack([ref.softmax(ref.score(s, enc, "dot")) @ enc for s in dec])  # (3, d)

    def cos(a, b):
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    ctx.say(
        "Without attention, the encoder squeezes the whole input into one fixed vector and the\n"
        "decoder sees that same vector at every step; the longer the input, the more is lost.\n"
        "With attention, each step builds its own context from all encoder states:",
        "アテンションがないと、エンコーダは入力全体を一つの固定ベクトルに詰め込み、デコーダは\n"
        "毎ステップ同じベクトルを見ます。入力が長いほど多くが失われます。アテンションがあれば、\n"
        "各ステップがすべてのエンコーダ状態から自分の文脈を作ります：",
    )
    sims = [cos(contexts[i], contexts[j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    ctx.say(
        f"  fixed context at steps 1, 2, 3: identical (cosine 1.000)\n"
        f"  attention contexts, cosine between steps (1,2), (1,3), (2,3): {[round(s, 3) for s in sims]}",
        f"  固定の文脈：ステップ 1、2、3 で同一（コサイン類似度 1.000）\n"
        f"  アテンションの文脈、ステップ間のコサイン類似度 (1,2)、(1,3)、(2,3)：{[round(s, 3) for s in sims]}",
    )
    return {"fixed": fixed, "contexts": contexts, "similarities": sims}


def score_functions(ctx: Context) -> dict:
    rng = ctx.rng()
    enc, dec = _states(ctx.rng(section=1))  # the same states as section 1
    d, d_a = enc.shape[1], 4
    params = {
        "dot": {},
        "scaled_dot": {},
        "general": {"W": rng.standard_normal((d, d))},
        "additive": {
            "W_q": rng.standard_normal((d, d_a)),
            "W_k": rng.standard_normal((d, d_a)),
            "v": rng.standard_normal(d_a),
        },
    }
    params["concat"] = {
        "W": np.concatenate([params["additive"]["W_q"], params["additive"]["W_k"]]),
        "v": params["additive"]["v"],
    }
    s = dec[0]
    rows, weights = [], []
    formulas = {
        "dot": "s . h",
        "scaled_dot": "s . h / sqrt(d)",
        "general": "s^T W h",
        "additive": "v^T tanh(W_q s + W_k h)",
        "concat": "v^T tanh(W [s; h])",
    }
    for kind, p in params.items():
        sc = ref.score(s, enc, kind, **p)
        w = ref.softmax(sc)
        weights.append(w)
        rows.append(
            (
                kind,
                formulas[kind],
                " ".join(f"{x:+.2f}" for x in sc),
                " ".join(f"{x:.2f}" for x in w),
            )
        )
    ctx.say(
        "Score functions compare a decoder state s with each encoder state h. The same states,\n"
        "scored five ways (additive and concat share weights here: concat's W stacks W_q over W_k):",
        "スコア関数は、デコーダの状態 s と各エンコーダの状態 h を比べます。同じ状態を 5 通りで\n"
        "採点します（ここでは additive と concat は重みを共有：concat の W は W_q と W_k を縦に重ねたもの）：",
    )
    header = (
        ("score", "formula", "scores", "weights")
        if ctx.lang == "en"
        else ("スコア", "式", "スコア値", "重み")
    )
    ctx.say(fmt_table(header, rows))
    ctx.say(
        "dot needs no parameters; general learns which features should match; additive and\n"
        "concat pass both through a small network (the same function, written two ways).",
        "dot はパラメータ不要。general はどの特徴同士を合わせるかを学びます。additive と concat は\n"
        "両方を小さなネットワークに通します（同じ関数の二通りの書き方です）。",
    )
    if ctx.plots is not None:
        from ..viz import heatmap

        ctx.plot(
            "lesson4_2_scores",
            lambda: heatmap(
                np.stack(weights),
                list(params),
                SOURCE,
                title=ctx.t("weights by score function", "スコア関数ごとの重み"),
                ylabel=ctx.t("score", "スコア"),
                xlabel=ctx.t("source word", "入力の単語"),
            ),
        )
    return {"weights": dict(zip(params, weights, strict=True))}


def which_query(ctx: Context) -> dict:
    rng = ctx.rng()
    enc, _ = _states(ctx.rng(section=1))
    d = enc.shape[1]
    s_prev, h_t = rng.standard_normal(d), rng.standard_normal(d)
    W_q, W_k, v = rng.standard_normal((d, 4)), rng.standard_normal((d, 4)), rng.standard_normal(4)
    W, W_c = rng.standard_normal((d, d)), rng.standard_normal((2 * d, d))
    a_b = ref.softmax(ref.score(s_prev, enc, "additive", W_q=W_q, W_k=W_k, v=v))
    a_l = ref.softmax(ref.score(h_t, enc, "general", W=W))
    c_l = a_l @ enc
    h_tilde = np.tanh(np.concatenate([c_l, h_t]) @ W_c)
    ctx.say(
        "Bahdanau (2014) asks with the previous decoder state s_{t-1}, before the RNN step; the\n"
        "context then goes into the RNN's input. Luong (2015) runs the RNN step first and asks with\n"
        "the current state h_t; the context and h_t make the attentional state tanh(W_c [c; h_t])\n"
        "that predicts the output word.",
        "Bahdanau（2014）は RNN の更新の前に、一つ前のデコーダ状態 s_{t-1} で問い合わせ、文脈を\n"
        "RNN の入力に加えます。Luong（2015）は先に RNN を進め、現在の状態 h_t で問い合わせます。\n"
        "文脈と h_t から注意状態 tanh(W_c [c; h_t]) を作り、出力の単語を予測します。",
    )
    ctx.say(
        f"  Bahdanau, query s_(t-1), additive: {' '.join(f'{x:.2f}' for x in a_b)}\n"
        f"  Luong, query h_t, general:        {' '.join(f'{x:.2f}' for x in a_l)}\n"
        f"  Luong attentional state tanh(W_c [c; h_t]) = {np.round(h_tilde, 3).tolist()}"
    )
    return {"bahdanau": a_b, "luong": a_l, "h_tilde": h_tilde}


TYPES = [
    (
        "Bahdanau",
        Text("decoder state (previous)", "デコーダの状態（一つ前）"),
        Text("encoder states", "エンコーダの状態"),
        Text("seq2seq translation", "seq2seq 翻訳"),
    ),
    (
        "Luong",
        Text("decoder state (current)", "デコーダの状態（現在）"),
        Text("encoder states", "エンコーダの状態"),
        Text("seq2seq, simpler", "seq2seq（より単純）"),
    ),
    (
        Text("self", "自己"),
        Text("the sequence itself", "系列自身"),
        Text("the sequence itself", "系列自身"),
        Text("Transformer encoder (BERT)", "Transformer エンコーダ（BERT）"),
    ),
    (
        Text("cross", "交差"),
        Text("decoder", "デコーダ"),
        Text("encoder output", "エンコーダの出力"),
        Text("Transformer decoder", "Transformer デコーダ"),
    ),
    (
        Text("causal self", "因果的自己"),
        Text("the sequence itself", "系列自身"),
        Text("earlier positions only (masked)", "前の位置のみ（マスク）"),
        Text("GPT, autoregressive", "GPT（自己回帰）"),
    ),
]


def types(ctx: Context) -> dict:
    header = (
        ("type", "Q from", "K, V from", "used in")
        if ctx.lang == "en"
        else ("種類", "Q の出どころ", "K・V の出どころ", "使われる所")
    )
    rows = [[c if isinstance(c, str) else c(ctx.lang) for c in row] for row in TYPES]
    ctx.say(fmt_table(header, rows))
    return {}


WORDS = ["The", "cat", "sat", "on", "the", "mat"]
# Hand-made keys with four features: [does the action, is the action, relation, place].
CAT_KEYS = np.array(
    [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
    dtype=float,
)
# The query of "sat": who sits (strongly), itself, the relation, the place. Chosen as logs so the
# softmax weights come out as simple ratios 9 : 4 : 3 : 2 against 1 for the articles.
Q_SAT = np.log([9.0, 4.0, 3.0, 2.0])


def cat_sat(ctx: Context) -> dict:
    scores = ref.score(Q_SAT, CAT_KEYS, "dot")
    w = ref.softmax(scores)
    ctx.say(
        "Self-attention for 'sat' in 'The cat sat on the mat', with hand-made vectors. Each key has\n"
        "four features: [does the action, is the action, relation, place]; the articles have none.\n"
        f"The query of 'sat' = {np.round(Q_SAT, 2).tolist()} (who sits matters most).",
        "「The cat sat on the mat」の 'sat' の自己アテンションを、手作りのベクトルで計算します。\n"
        "キーは 4 つの特徴 [動作をする者, 動作そのもの, 関係, 場所] を持ち、冠詞はどれも持ちません。\n"
        f"'sat' のクエリ = {np.round(Q_SAT, 2).tolist()}（誰が座るかが最も重要）。",
    )
    ctx.say("keys =\n" + fmt_matrix(CAT_KEYS, 0))
    for word, weight in zip(WORDS, w, strict=True):
        ctx.say(f"  -> {word:4s} {weight:.2f}  " + "#" * round(weight * 40))
    ctx.say(
        "'cat', the one doing the sitting, gets the most; 'sat' itself comes next.",
        "座っている 'cat' が最も多くを受け取り、次が 'sat' 自身です。",
    )
    if ctx.plots is not None:
        from ..viz import bars

        ctx.plot(
            "lesson4_5_cat_sat",
            lambda: bars(
                w,
                WORDS,
                title=ctx.t("attention of 'sat'", "'sat' の注意"),
                ylabel=ctx.t("weight", "重み"),
            ),
        )
    return {"weights": w}


LESSON = Lesson(
    number=4,
    title=Text("Seq2seq attention: Bahdanau vs Luong", "seq2seq のアテンション：Bahdanau と Luong"),
    summary=Text(
        "the bottleneck, score functions side by side, which query, attention types, 'the cat sat'",
        "ボトルネック、スコア関数の比較、どのクエリを使うか、アテンションの種類、'the cat sat'",
    ),
    source="lesson-8-attention-seq2seq.txt",
    intro=Text(
        "Attention was born in translation: an encoder-decoder that had to pass the whole source\n"
        "sentence through one vector. Letting the decoder look back at every encoder state fixed\n"
        "that, and led straight to the Transformer.",
        "アテンションは翻訳から生まれました。エンコーダ・デコーダは入力文全体を一つのベクトルで\n"
        "渡さなければなりませんでした。デコーダがすべてのエンコーダ状態を振り返れるようにして\n"
        "これを解決し、そのまま Transformer につながりました。",
    ),
    sections=[
        Step(Text("The fixed-context bottleneck", "固定文脈のボトルネック"), bottleneck),
        Step(Text("Score functions side by side", "スコア関数を並べて比べる"), score_functions),
        Step(Text("Where the query comes from", "クエリの出どころ"), which_query),
        Step(Text("Kinds of attention", "アテンションの種類"), types),
        Step(Text("'The cat sat on the mat'", "'The cat sat on the mat'"), cat_sat),
    ],
    outro=Text(
        "Train both kinds on date normalisation and compare them with the no-attention baseline:\n"
        "'attnlab train seq2seq --attention bahdanau' and 'attnlab compare seq2seq'.",
        "日付の正規化で両方を学習し、アテンションなしの基準と比べましょう：\n"
        "'attnlab train seq2seq --attention bahdanau' と 'attnlab compare seq2seq'。",
    ),
    quiz=[
        Question(
            Text(
                "What is the bottleneck of seq2seq without attention?",
                "アテンションなしの seq2seq のボトルネックは何ですか？",
            ),
            Text(
                "The whole input must pass through one fixed-size vector, so long inputs lose\n"
                "information, and the decoder sees the same summary at every step.",
                "入力全体を一つの固定長ベクトルに通さねばならず、長い入力ほど情報が失われ、デコーダは\n"
                "毎ステップ同じ要約しか見られないことです。",
            ),
        ),
        Question(
            Text(
                "How do Bahdanau and Luong attention differ?",
                "Bahdanau と Luong のアテンションはどう違いますか？",
            ),
            Text(
                "Bahdanau scores with the previous decoder state using an additive network and feeds\n"
                "the context into the RNN; Luong scores with the current state (dot, general or\n"
                "concat) and combines the context with it after the RNN step.",
                "Bahdanau は一つ前のデコーダ状態と加法型のネットワークで採点し、文脈を RNN に入れます。\n"
                "Luong は現在の状態で（dot、general、concat で）採点し、RNN の後で文脈と組み合わせます。",
            ),
        ),
        Question(
            Text(
                "Where do Q, K and V come from in cross-attention?",
                "交差アテンションでは Q、K、V はどこから来ますか？",
            ),
            Text(
                "Q from the decoder; K and V from the encoder's output.",
                "Q はデコーダから、K と V はエンコーダの出力から来ます。",
            ),
        ),
    ],
)
