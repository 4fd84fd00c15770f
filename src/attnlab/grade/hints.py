"""One-line hints per mistake id, in the lesson languages."""

from ..i18n import Text

HINTS: dict[str, Text] = {
    "softmax_axis": Text(
        "The softmax runs over the wrong axis: each row (one query) must sum to 1, so use axis=-1 (axis=1).",
        "softmax の軸が違います。各行（一つのクエリ）の和が 1 になるよう axis=-1（axis=1）で計算します。",
    ),
    "missing_keepdims": Text(
        "Row sums lost their shape: use e.sum(axis=-1, keepdims=True) so each row divides by its own sum.",
        "行の和の形が失われています。e.sum(axis=-1, keepdims=True) で各行を自分の和で割ります。",
    ),
    "missing_scale": Text(
        "The scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax.",
        "スコアがスケーリングされていません。softmax の前に Q Kᵀ を √d_k で割ります。",
    ),
    "wrong_scale": Text(
        "Wrong scale: divide by sqrt(d_k), the key width (not d, and not sqrt(d_model)).",
        "スケールが違います。キーの幅 d_k の平方根 √d_k で割ります（d でも √d_model でもありません）。",
    ),
    "mask_orientation": Text(
        "The mask is upside down: keep the lower triangle (np.tril), where key s <= query t.",
        "マスクの向きが逆です。下三角（np.tril）、つまりキー s <= クエリ t の位置を残します。",
    ),
    "mask_ignored": Text(
        "With mask=True the future must be hidden: set scores above the diagonal to -inf before softmax.",
        "mask=True のときは未来を隠します。softmax の前に対角より上のスコアを -inf にします。",
    ),
    "mask_after_softmax": Text(
        "The mask is applied after the softmax, so rows no longer sum to 1: mask the scores first.",
        "softmax の後でマスクしているため行の和が 1 になりません。先にスコアをマスクします。",
    ),
    "unstable_softmax": Text(
        "Large scores overflow exp: subtract each row's maximum before np.exp.",
        "大きなスコアで exp があふれます。np.exp の前に各行の最大値を引きます。",
    ),
    "transposed_weights": Text(
        "The weights are transposed: scores are Q K^T (queries are rows), not K Q^T.",
        "重みが転置されています。スコアは Q Kᵀ（行がクエリ）で、K Qᵀ ではありません。",
    ),
    "mutates_input": Text(
        "Your function changed its input arrays: work on new arrays (no in-place ops on arguments).",
        "関数が入力の配列を書き換えています。引数をその場で変更せず、新しい配列で計算します。",
    ),
    "wrong_return": Text(
        "The return value does not match the contract (type, number of arrays or shape).",
        "戻り値が約束（型、配列の数、形）と合っていません。",
    ),
    "nan_output": Text(
        "The result contains NaN or Inf where the right answer is finite.",
        "正しい答えが有限の位置に NaN や Inf が出ています。",
    ),
    "timeout": Text(
        "Your code ran past the time limit: look for an endless loop or a very slow one.",
        "制限時間を超えました。終わらないループや非常に遅いループがないか確かめます。",
    ),
    "crash": Text(
        "Your code raised an error; the traceback shows where.",
        "コードがエラーを出しました。トレースバックが場所を示しています。",
    ),
    "syntax_error": Text(
        "The file is not valid Python; fix the line shown.",
        "ファイルが正しい Python ではありません。示された行を直します。",
    ),
    "forbidden_import": Text(
        "This exercise allows NumPy and the standard library only (no torch, no attnlab).",
        "この課題で使えるのは NumPy と標準ライブラリだけです（torch や attnlab は使えません）。",
    ),
    "sin_cos_swapped": Text(
        "sin and cos are swapped: sin goes on even columns (0, 2, ...), cos on odd ones.",
        "sin と cos が逆です。偶数列（0, 2, ...）が sin、奇数列が cos です。",
    ),
    "missing_tanh": Text(
        "The additive score needs tanh: v . tanh(query W_q + keys W_k).",
        "加法型スコアには tanh が必要です：v・tanh(query W_q + keys W_k)。",
    ),
}
