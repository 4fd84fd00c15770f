"""The one table of mistake ids: what each means, its hints, and the versions that produce it.

Every id the grader can name is an entry here. An entry has

- ``step``: the step of the computation it belongs to (hint levels 1 and 2 come from the step);
- ``fix``: the level-3 hint (how to fix it), in every lesson language;
- ``versions``: for mistakes recognised by their numbers, the wrong versions that produce them,
  per family of exercises (``attention``, ``softmax``, ``heads``, ``projections``,
  ``positions``, ``additive``, ``mask``): keyword changes to the functions in ``variants``
  (one dict per way of making the mistake). ``exercises`` builds the candidates from them and
  ``diagnosis`` names an id only when one of its versions reproduces the learner's answer;
- ``probe``: True when the id can also come from a probe (a hypothesis read off the answer);
- ids without versions are named by a check of the grader itself (``diagnosis`` and
  ``grader``): a crash, a forbidden import, NaN on ordinary inputs, and so on.

A new mistake is one entry here plus, if no keyword of ``variants`` makes it yet, that keyword.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..i18n import Text
from . import variants


@dataclass(frozen=True)
class Mistake:
    id: str
    step: str
    fix: Text
    versions: dict[str, list[dict]] = field(default_factory=dict)
    probe: bool = False


def _m(id: str, step: str, en: str, ja: str, zh: str, probe: bool = False, **versions) -> Mistake:
    return Mistake(id, step, Text(en, ja, zh), versions, probe)


ENTRIES = [
    # ---- softmax ---------------------------------------------------------------------------
    _m(
        "softmax_axis", "softmax",
        "The softmax runs over the wrong axis: each row (one query) must sum to 1, so use axis=-1 (axis=1).",
        "ソフトマックスの軸が違います。各行（一つのクエリ）の和が 1 になるよう、axis=-1（axis=1）で計算してください。",
        "softmax 的轴不对：每一行（一个查询）的和必须为 1，所以用 axis=-1（axis=1）。",
        softmax=[{"max_over": "column", "sum_over": "column"}, {"sum_over": "column"},
                 {"max_over": "column"}],
        # with a mask, the masked scores' fill matters on columns that are masked throughout
        # (more keys than queries): -inf gives NaN there, -1e9 a column of its own, "add" another
        attention=[{"max_over": "column", "sum_over": "column"}, {"sum_over": "column"},
                   {"max_over": "column"},
                   {"max_over": "column", "sum_over": "column", "fill": -1e9},
                   {"max_over": "column", "fill": -1e9},
                   {"max_over": "column", "sum_over": "column", "fill": "add"},
                   {"max_over": "column", "fill": "add"}],
        additive=[{"softmax_over": "features"}],
        heads=[{"across_heads": "axis"}],
    ),
    _m(
        "softmax_global_sum", "softmax",
        "Each row must be divided by its own sum, not by the sum of the whole array: e.sum(axis=-1, keepdims=True).",
        "配列全体の和ではなく、各行をその行の和で割ってください：e.sum(axis=-1, keepdims=True)。",
        "每一行要除以它自己的和，而不是整个数组的和：e.sum(axis=-1, keepdims=True)。",
        softmax=[{"sum_over": "all"}, {"max_over": "all", "sum_over": "all"}],
        attention=[{"sum_over": "all"}, {"max_over": "all", "sum_over": "all"}],
        heads=[{"across_heads": "sum"}],
    ),
    _m(
        "missing_keepdims", "softmax",
        "Row sums lost their shape: use e.sum(axis=-1, keepdims=True) so each row divides by its own sum.",
        "行の和の形が失われています。e.sum(axis=-1, keepdims=True) として、各行をその行の和で割ってください。",
        "每行的和丢失了形状：用 e.sum(axis=-1, keepdims=True)，让每一行除以它自己的和。",
        softmax=[{"keepdims": False}],
        attention=[{"keepdims": False}],
    ),
    _m(
        "unstable_softmax", "softmax",
        "Large scores overflow exp: subtract each row's maximum before np.exp.",
        "大きなスコアで exp がオーバーフローします。np.exp の前に各行の最大値を引いてください。",
        "分数很大时 exp 会溢出：在 np.exp 之前减去每一行的最大值。",
        softmax=[{"max_over": "none"}, {"max_over": "all"}],
        attention=[{"max_over": "none"}, {"max_over": "all"}],
        additive=[{"max_over": "none"}],
        heads=[{"across_heads": "max"}],
    ),
    _m(
        "nan_output", "softmax",
        "The result contains NaN or Inf where the right answer is finite.",
        "正しい答えが有限の位置に NaN や Inf が出ています。",
        "正确答案是有限值的位置出现了 NaN 或 Inf。",
    ),
    # ---- scale -----------------------------------------------------------------------------
    _m(
        "missing_scale", "scale",
        "The scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax.",
        "スコアがスケーリングされていません。ソフトマックスの前に Q Kᵀ を √d_k で割ってください。",
        "分数没有缩放：在 softmax 之前把 Q Kᵀ 除以 √d_k。",
        attention=[{"scale": "none"}],
    ),
    _m(
        "wrong_scale", "scale",
        "Wrong scale: divide by sqrt(d_k), the key width (not d, and not sqrt(d_model)).",
        "スケールが違います。キーの幅 d_k の平方根 √d_k で割ってください（d でも √d_model でもありません）。",
        "缩放不对：除以键宽度 d_k 的平方根 √d_k（不是 d，也不是 √d_model）。",
        attention=[{"scale": "d"}, {"scale": "sqrt_model"}, {"scale": "times_sqrt"}],
    ),
    _m(
        "scale_after_softmax", "scale",
        "The scale belongs to the scores: divide Q K^T by sqrt(d_k) before the softmax, not the weights after it.",
        "スケーリングはスコアに対して行います。ソフトマックスの後の重みではなく、その前の Q Kᵀ を √d_k で割ってください。",
        "缩放作用在分数上：在 softmax 之前把 Q Kᵀ 除以 √d_k，而不是在 softmax 之后除权重。",
        attention=[{"scale_at": "weights"}, {"scale_at": "output"}],
    ),
    # ---- mask ------------------------------------------------------------------------------
    _m(
        "mask_orientation", "mask",
        "The mask is upside down: keep the lower triangle (np.tril), where key s <= query t.",
        "マスクの向きが逆です。下三角（np.tril）、つまりキー s <= クエリ t の位置を残してください。",
        "掩码方向反了：保留下三角（np.tril），即键 s <= 查询 t 的位置。",
        attention=[{"upper": True}, {"upper": "strict"}, {"upper": "strict", "fill": -1e9},
                   {"upper": "strict", "fill": "add"}],
        mask=[{"upper": True}, {"upper": "strict"}],
    ),
    _m(
        "mask_ignored", "mask",
        "With mask=True the future must be hidden: set scores above the diagonal to -inf before softmax.",
        "mask=True のときは未来を隠す必要があります。ソフトマックスの前に、対角線より上のスコアを -inf にしてください。",
        "mask=True 时必须遮住未来：在 softmax 之前把对角线以上的分数设为 -inf。",
        attention=[{"mask_mode": "none"}],
    ),
    _m(
        "mask_after_softmax", "mask",
        "The mask is applied after the softmax, so rows no longer sum to 1: mask the scores first.",
        "ソフトマックスの後でマスクしているため、行の和が 1 になりません。先にスコアをマスクしてください。",
        "掩码用在了 softmax 之后，所以每行的和不再是 1：先对分数做掩码。",
        attention=[{"mask_mode": "after"}, {"mask_mode": "after_renorm"}],
    ),
    _m(
        "mask_fill_zero", "mask",
        "A masked score of 0 still gets weight after softmax; set masked scores to -inf (or a large negative number).",
        "マスクしたスコアを 0 にしても、ソフトマックスの後に重みが残ります。-inf（または絶対値の大きな負の数）にしてください。",
        "被遮住的分数设为 0，softmax 之后仍有权重；应设为 -inf（或一个绝对值很大的负数）。",
        attention=[{"mask_mode": "zero"}],
    ),
    _m(
        "mask_diagonal_excluded", "mask",
        "A position may see itself: keep the diagonal in the mask (np.tril with k=0, not k=-1).",
        "各位置は自分自身を見てよいので、対角線もマスクに残してください（np.tril は k=0 で、k=-1 ではありません）。",
        "每个位置都可以关注自己：掩码要保留对角线（np.tril 用 k=0，不是 k=-1）。",
        attention=[{"diagonal": False}, {"diagonal": False, "fill": -1e9},
                   {"diagonal": False, "fill": "add"}],
        mask=[{"diagonal": False}],
    ),
    _m(
        "mask_shows_next", "mask",
        "The mask lets each position see the next key too: keep the diagonal and what lies below it (np.tril with k=0, not k=1; np.triu hides from k=1).",
        "マスクが次のキーまで見せています。対角線とその下だけを残してください（np.tril は k=0 で、k=1 ではありません。np.triu で隠すなら k=1 から）。",
        "掩码让每个位置还能看到下一个键：只保留对角线及其下方（np.tril 用 k=0，不是 k=1；用 np.triu 隐藏时从 k=1 开始）。",
        attention=[{"ahead": 1}, {"ahead": 1, "fill": -1e9}, {"ahead": 1, "fill": "add"}],
        mask=[{"ahead": 1}],
    ),
    _m(
        "mask_bottom_right", "mask",
        "The causal diagonal is aligned to the last key (np.tril(..., k=S-T)); query t must see keys 0..t, counted from the first key: np.tril(np.ones((T, S)), k=0).",
        "因果マスクの対角線が最後のキーに合わせてあります（np.tril(..., k=S-T)）。クエリ t が見てよいのは先頭から数えてキー 0..t です：np.tril(np.ones((T, S)), k=0)。",
        "因果掩码的对角线对齐到了最后一个键（np.tril(..., k=S-T)）；查询 t 应看到从第一个键数起的键 0..t：np.tril(np.ones((T, S)), k=0)。",
        attention=[{"align": "bottom_right"}, {"align": "bottom_right", "fill": -1e9}],
    ),
    _m(
        "mask_dtype", "mask",
        "The mask must be a bool array (True = may attend); 0/1 numbers are added to scores by some libraries.",
        "マスクは bool 配列（True = 見てよい）にしてください。0/1 の数値は、ライブラリによってはスコアに足されてしまいます。",
        "掩码必须是 bool 数组（True = 可以关注）；有些库会把 0/1 数值加到分数上。",
    ),
    # ---- scores ----------------------------------------------------------------------------
    _m(
        "transposed_weights", "scores",
        "The weights are transposed: scores are Q K^T (queries are rows), not K Q^T.",
        "重みが転置されています。スコアは Q Kᵀ（行がクエリ）で、K Qᵀ ではありません。",
        "权重被转置了：分数是 Q Kᵀ（行是查询），不是 K Qᵀ。",
        attention=[{"transpose": True}, {"weights_T": True}],
    ),
    _m(
        "reshape_not_transpose", "scores",
        "K.reshape(d, S) keeps the numbers in memory order and only relabels the axes; it is not the transpose. Use K.T (or K.transpose()) in Q @ K.T.",
        "K.reshape(d, S) はメモリ上の並びのまま軸の長さを変えるだけで、転置にはなりません。Q @ K.T のように K.T（または K.transpose()）を使ってください。",
        "K.reshape(d, S) 只是按内存顺序重新划分轴，并不是转置。请在 Q @ K.T 中使用 K.T（或 K.transpose()）。",
        attention=[{"kt": "reshape"}],
    ),
    # ---- projections -----------------------------------------------------------------------
    _m(
        "wrong_value_projection", "projections",
        "The values use the wrong matrix: V = X @ W_V (not W_K or W_Q).",
        "バリュー（V）を作る行列が違います。V = X @ W_V です（W_K や W_Q ではありません）。",
        "值用错了矩阵：V = X @ W_V（不是 W_K 或 W_Q）。",
        projections=[{"values": "W_K"}, {"values": "W_Q"}],
        heads=[{"values": "W_K"}, {"values": "W_Q"}],
    ),
    # ---- heads -----------------------------------------------------------------------------
    _m(
        "head_split_reshape", "heads",
        "Splitting heads needs a transpose: reshape (T, d_model) to (T, h, d_k), then transpose to (h, T, d_k).",
        "ヘッドの分割には転置が必要です。(T, d_model) を (T, h, d_k) に reshape してから、(h, T, d_k) に転置してください。",
        "拆分多头需要转置：先把 (T, d_model) reshape 成 (T, h, d_k)，再转置成 (h, T, d_k)。",
        heads=[{"split": "reshape"}],
    ),
    _m(
        "head_merge_reshape", "heads",
        "Joining heads needs the transpose back: (h, T, d_k) -> transpose to (T, h, d_k) -> reshape to (T, d_model).",
        "ヘッドをつなぎ戻すにも転置が必要です。(h, T, d_k) を (T, h, d_k) に転置してから、(T, d_model) に reshape してください。",
        "合并多头也需要转置回来：(h, T, d_k) 先转置成 (T, h, d_k)，再 reshape 成 (T, d_model)。",
        heads=[{"join": "reshape"}],
    ),
    _m(
        "heads_interleaved", "heads",
        "Head i takes a contiguous block of columns, i*d_k to (i+1)*d_k-1, not every h-th column.",
        "ヘッド i が使うのは i*d_k 列目から (i+1)*d_k-1 列目までの連続した列です。h 列おきではありません。",
        "头 i 取连续的列切片，从第 i*d_k 列到第 (i+1)*d_k-1 列，而不是每隔 h 列取一列。",
        heads=[
            {"split": "interleaved"},
            {"split": "interleaved", "join": "interleaved"},
        ],
    ),
    _m(
        "missing_output_projection", "heads",
        "After joining the heads, multiply by W_O: the output projection mixes the heads.",
        "ヘッドをつないだ後に W_O を掛けてください。この出力射影がヘッドを混ぜ合わせます。",
        "合并各头之后要乘以 W_O：输出投影把各头混合起来。",
        heads=[{"project": False}],
    ),
    _m(
        "heads_out_of_order", "heads",
        "The heads are joined in another order: head 0's output goes in columns 0..d_k-1, head 1's next, and so on.",
        "ヘッドをつなぐ順番が違います。ヘッド 0 の出力を列 0..d_k-1 に、次にヘッド 1 の出力を、という順に並べてください。",
        "各头拼接的顺序不对：头 0 的输出放在第 0..d_k-1 列，接着是头 1，依此类推。",
        heads=[{"join": "reversed"}],
    ),
    # ---- positions -------------------------------------------------------------------------
    _m(
        "pe_wrong_base", "positions",
        "The frequencies use the wrong base: 10000 ** (2i / d).",
        "周波数の底が違います。正しくは 10000 ** (2i / d) です。",
        "频率的底数不对：应为 10000 ** (2i / d)。",
        probe=True,
    ),
    _m(
        "pe_exponent_i_not_2i", "positions",
        "The exponent is 2i/d for the column pair (2i, 2i+1), not i/d.",
        "指数は列の組 (2i, 2i+1) に対して 2i/d です。i/d ではありません。",
        "列对 (2i, 2i+1) 的指数是 2i/d，不是 i/d。",
        positions=[{"exponent": "i"}],
    ),
    _m(
        "pe_odd_column_frequency", "positions",
        "The cos in column 2i+1 uses the same frequency as the sin in column 2i (exponent 2i/d).",
        "列 2i+1 の cos は列 2i の sin と同じ周波数（指数 2i/d）を使います。",
        "第 2i+1 列的 cos 与第 2i 列的 sin 使用相同的频率（指数 2i/d）。",
        positions=[{"odd_own_index": True}],
    ),
    _m(
        "pe_concat_not_interleaved", "positions",
        "sin and cos alternate column by column (sin, cos, sin, cos, ...), not all sines then all cosines.",
        "sin と cos は列ごとに交互に並べます（sin, cos, sin, cos, ...）。sin をすべて並べてから cos を並べるのではありません。",
        "sin 和 cos 逐列交替（sin, cos, sin, cos, ...），而不是先放全部 sin 再放全部 cos。",
        positions=[{"layout": "concat"}, {"layout": "concat", "swap": True}],
    ),
    _m(
        "pe_position_offset", "positions",
        "Positions start at 0: the first row is sin(0) = 0, cos(0) = 1.",
        "位置は 0 から始まります。最初の行は sin(0) = 0、cos(0) = 1 です。",
        "位置从 0 开始：第一行是 sin(0) = 0、cos(0) = 1。",
        positions=[{"start": 1}],
    ),
    _m(
        "sin_cos_swapped", "positions",
        "sin and cos are swapped: sin goes on even columns (0, 2, ...), cos on odd ones.",
        "sin と cos が逆です。偶数列（0, 2, ...）が sin、奇数列が cos です。",
        "sin 和 cos 放反了：偶数列（0, 2, ...）放 sin，奇数列放 cos。",
        positions=[{"swap": True}],
    ),
    _m(
        "pe_one_function", "positions",
        "Each pair of columns takes both functions: sin on the even column (0, 2, ...), cos on the odd one; here one function fills both.",
        "列の組ごとに両方の関数を使います。偶数列（0, 2, ...）は sin、奇数列は cos です。ここでは片方の関数が両方の列を埋めています。",
        "每对列要用两个函数：偶数列（0, 2, ...）用 sin，奇数列用 cos；这里两列都用了同一个函数。",
        positions=[{"only": "sin"}, {"only": "cos"}],
    ),
    # ---- additive --------------------------------------------------------------------------
    _m(
        "missing_tanh", "additive",
        "The additive score needs tanh: v . tanh(query W_q + keys W_k).",
        "加法型スコアには tanh が必要です：v · tanh(query W_q + keys W_k)。",
        "加性分数需要 tanh：v · tanh(query W_q + keys W_k)。",
        # (tanh on the query term alone gives exactly these weights: softmax ignores a shift
        # that is the same for every key)
        additive=[{"tanh": "none"}],
    ),
    _m(
        "tanh_misplaced", "additive",
        "tanh goes around the sum of both projections, before the dot with v: v . tanh(query W_q + keys W_k).",
        "tanh は二つの射影の和に適用し、v との内積より前に置いてください：v · tanh(query W_q + keys W_k)。",
        "tanh 要包住两个投影之和，并放在与 v 做点积之前：v · tanh(query W_q + keys W_k)。",
        additive=[{"tanh": "outside"}, {"tanh": "key"}, {"tanh": "separate"}],
    ),
    # ---- contract (named by the grader's own checks) ---------------------------------------
    _m(
        "wrong_dtype", "contract",
        "The answer is an integer (or bool) array; weights and outputs are fractions: keep them floating point (no astype(int), no np.zeros(..., dtype=int) to fill).",
        "答えが整数（または bool）の配列になっています。重みや出力は小数なので、浮動小数点のままにしてください（astype(int) や dtype=int の np.zeros に書き込むのは不可）。",
        "答案是整数（或 bool）数组；权重和输出都是小数，请保持浮点类型（不要 astype(int)，也不要写进 dtype=int 的 np.zeros）。",
    ),
    _m(
        "low_precision", "contract",
        "The numbers were computed in half precision (float16): right to about 3 digits only. Compute in the inputs' precision (float64 or float32).",
        "半精度（float16）で計算されていて、有効数字 3 桁ほどしか合いません。入力と同じ精度（float64 か float32）で計算してください。",
        "结果是用半精度（float16）算的，只有大约 3 位有效数字正确。请用输入的精度（float64 或 float32）计算。",
    ),
    _m(
        "random_inside", "contract",
        "The same inputs gave different answers on two calls: something random runs inside the function (dropout, np.random). Attention itself is deterministic.",
        "同じ入力に対して、2 回の呼び出しで答えが変わりました。関数の中で乱数（ドロップアウトや np.random）が使われています。アテンション自体は決定的な計算です。",
        "相同的输入在两次调用中得到了不同的答案：函数内部用了随机数（dropout、np.random）。注意力本身是确定性的计算。",
    ),
    _m(
        "mutates_input", "contract",
        "Your function changed its input arrays: work on new arrays (no in-place ops on arguments).",
        "関数が入力の配列を書き換えています。引数をその場で変更せず、新しい配列で計算してください。",
        "你的函数修改了输入数组：请在新数组上计算（不要原地修改参数）。",
    ),
    _m(
        "wrong_return", "contract",
        "The return value does not match the contract (type, number of arrays or shape).",
        "戻り値が仕様（型、配列の数、形）と合っていません。",
        "返回值与约定不符（类型、数组个数或形状）。",
    ),
    _m(
        "missing_function", "contract",
        "The function the exercise asks for is not defined: check its name and signature in the starter.",
        "練習問題の関数が定義されていません。スターターファイルの関数名と引数を確認してください。",
        "练习要求的函数没有定义：请对照起始文件检查函数名和参数。",
    ),
    _m(
        "hardcoded_output", "contract",
        "The function returns stored numbers instead of computing them from its arguments.",
        "引数から計算せず、保存しておいた数値を返しています。",
        "函数返回的是预先存好的数字，而不是根据参数计算的结果。",
    ),
    _m(
        "grader_tampering", "contract",
        "The code replaces parts of NumPy, Python or the grader's report; that changes nothing here (the check runs elsewhere) but it is not allowed.",
        "コードが NumPy や Python、採点レポートの一部を置き換えています。採点は別の場所で行うので効果はありませんが、禁止されています。",
        "代码替换了 NumPy、Python 或评分报告的一部分。评分在别处进行，这样做不会生效，但仍然不允许。",
    ),
    _m(
        "forbidden_import", "contract",
        "This exercise allows NumPy and the standard library only (no torch, no attnlab, by any route).",
        "この練習問題で使えるのは NumPy と標準ライブラリだけです（torch や attnlab は、どんな方法でも使えません）。",
        "本练习只允许使用 NumPy 和标准库（不能用 torch，也不能用 attnlab，无论通过什么方式）。",
    ),
    # ---- code ------------------------------------------------------------------------------
    _m(
        "crash", "code",
        "Your code raised an error; the traceback shows where.",
        "コードでエラーが発生しました。場所はトレースバックに示されています。",
        "代码抛出了错误；回溯信息指出了位置。",
    ),
    _m(
        "timeout", "code",
        "Your code ran past the time limit: look for an endless loop or a very slow one.",
        "制限時間を超えました。終わらないループや非常に遅いループがないか確かめてください。",
        "代码超过了时间限制：检查是否有死循环或非常慢的循环。",
    ),
    _m(
        "syntax_error", "code",
        "The file is not valid Python; fix the line shown.",
        "ファイルが Python として正しくありません。示された行を直してください。",
        "文件不是合法的 Python；请修改所示的那一行。",
    ),
]  # fmt: skip


def check_versions(entries: list[Mistake]) -> None:
    """Every version names a known family and only keywords that family's functions take
    (``variants.FAMILIES``); ids are unique. Run when this module loads."""
    seen: set[str] = set()
    for m in entries:
        if m.id in seen:
            raise ValueError(f"mistake {m.id!r} is in the table twice")
        seen.add(m.id)
        for family, changes in m.versions.items():
            if family not in variants.FAMILIES:
                raise ValueError(f"mistake {m.id!r}: unknown family {family!r}")
            allowed = variants.keywords(family)
            for change in changes:
                unknown = sorted(set(change) - allowed)
                if unknown:
                    raise ValueError(f"mistake {m.id!r}: {family} versions take no {unknown}")


check_versions(ENTRIES)
MISTAKES: dict[str, Mistake] = {m.id: m for m in ENTRIES}


def versions(family: str) -> dict[str, list[dict]]:
    """{id: [changes, ...]} of every mistake with versions in ``family``, in table order."""
    return {m.id: m.versions[family] for m in ENTRIES if family in m.versions}


STEPS: dict[str, tuple[Text, Text]] = {  # step -> (concept, where to look): hint levels 1 and 2
    "softmax": (
        Text(
            "Softmax turns each query's scores into weights that are positive and sum to 1.",
            "ソフトマックスは各クエリのスコアを、正で和が 1 の重みに変えます。",
            "softmax 把每个查询的分数变成正的、和为 1 的权重。",
        ),
        Text(
            "Look at the softmax: which axis it reduces over, and what it subtracts and divides by.",
            "ソフトマックスを見直してください。どの軸で集計し、何を引き、何で割っていますか。",
            "检查 softmax：沿哪个轴求和，减去了什么，除以了什么。",
        ),
    ),
    "scale": (
        Text(
            "Dot products grow with the width d_k; scaling keeps the softmax from saturating.",
            "内積のばらつきは幅 d_k とともに大きくなります。スケーリングでソフトマックスの飽和を防ぎます。",
            "点积的分布随宽度 d_k 变宽；缩放可以防止 softmax 饱和。",
        ),
        Text(
            "Look at the line that computes the scores from Q and K.",
            "Q と K からスコアを計算する行を見直してください。",
            "检查由 Q 和 K 计算分数的那一行。",
        ),
    ),
    "mask": (
        Text(
            "The causal mask lets each position see itself and the past, never the future.",
            "因果マスクは各位置に自分と過去だけを見せ、未来は見せません。",
            "因果掩码让每个位置只看到自己和过去，永远看不到未来。",
        ),
        Text(
            "Look at where and how the mask is applied: which triangle, which value, before softmax.",
            "マスクをどこでどう適用しているか見直してください。どちらの三角形か、どの値で埋めるか、ソフトマックスの前か。",
            "检查掩码在哪里、以什么方式使用：哪个三角，填什么值，是否在 softmax 之前。",
        ),
    ),
    "scores": (
        Text(
            "Row t of the weights belongs to query t: scores are Q K^T, queries down, keys across.",
            "重みの t 行目はクエリ t のものです。スコアは Q Kᵀ で、縦がクエリ、横がキーです。",
            "权重的第 t 行属于查询 t：分数是 Q Kᵀ，纵向是查询，横向是键。",
        ),
        Text(
            "Look at the order of Q and K in the scores, and at what you return.",
            "スコアでの Q と K の順序と、返している値を見直してください。",
            "检查分数中 Q 和 K 的顺序，以及你返回的值。",
        ),
    ),
    "projections": (
        Text(
            "Queries, keys and values are three different projections of the same input.",
            "クエリ・キー・バリューは同じ入力の三つの異なる射影です。",
            "查询、键和值是同一输入的三个不同投影。",
        ),
        Text(
            "Look at the three lines that build Q, K and V.",
            "Q、K、V を作る 3 行を見直してください。",
            "检查构造 Q、K、V 的三行代码。",
        ),
    ),
    "heads": (
        Text(
            "Each head attends on its own contiguous slice of width d_k; W_O mixes the heads back.",
            "各ヘッドは幅 d_k の連続した部分でアテンションを計算し、W_O がヘッドを混ぜ合わせます。",
            "每个头在自己那块宽度为 d_k 的连续切片上做注意力；W_O 再把各头混合回来。",
        ),
        Text(
            "Look at how the projections are split into heads and joined back.",
            "射影をヘッドに分ける処理と、つなぎ戻す処理を見直してください。",
            "检查把投影拆成多个头、再拼接回来的代码。",
        ),
    ),
    "positions": (
        Text(
            "Each column pair is a sin/cos of the position at its own frequency, base^(-2i/d).",
            "各列の組は、位置をそれぞれの周波数 base^(-2i/d) の sin と cos で表します。",
            "每一对列是位置在各自频率 base^(-2i/d) 下的 sin/cos。",
        ),
        Text(
            "Look at the positions, the exponent and which columns get sin and cos.",
            "位置、指数、どの列に sin と cos を入れるかを見直してください。",
            "检查位置、指数，以及哪些列放 sin、哪些列放 cos。",
        ),
    ),
    "additive": (
        Text(
            "Additive attention scores a key by v . tanh(W_q query + W_k key): a small network.",
            "加法型アテンションは、v · tanh(W_q query + W_k key) という小さなネットワークでキーのスコアを計算します。",
            "加性注意力用 v · tanh(W_q query + W_k key) 这个小网络给键打分。",
        ),
        Text(
            "Look at the score line: where tanh is and what it wraps.",
            "スコアを計算する行を見直してください。tanh がどこにあり、何を包んでいますか。",
            "检查打分那一行：tanh 在哪里，它包住了什么。",
        ),
    ),
    "contract": (
        Text(
            "The function must follow the exercise's contract: its name, arguments and return value.",
            "関数は練習問題の仕様（名前・引数・戻り値）に従う必要があります。",
            "函数必须遵守练习的约定：名字、参数和返回值。",
        ),
        Text(
            "Compare your function with the starter's signature and docstring.",
            "スターターファイルのシグネチャや docstring と見比べてください。",
            "把你的函数与起始文件的签名和文档字符串对照。",
        ),
    ),
    "code": (
        Text(
            "The code has to run to the end on every case.",
            "コードはすべてのケースで最後まで動く必要があります。",
            "代码必须在每个用例上都能完整运行。",
        ),
        Text(
            "Look at the line the message points to.",
            "メッセージが指している行を見直してください。",
            "检查错误信息指向的那一行。",
        ),
    ),
}


def hint(mistake: str, lang: str = "en", level: int = 3) -> str:
    """The hint for ``mistake`` at ``level`` (1 concept, 2 + where to look, 3 how to fix)."""
    m = MISTAKES.get(mistake)
    if m is None:
        return ""
    if level >= 3:
        return m.fix(lang)
    concept, where = STEPS[m.step]
    space = " " if lang == "en" else ""  # ja/zh sentences follow 。 without a space
    return concept(lang) if level == 1 else f"{concept(lang)}{space}{where(lang)}"


# mistakes that leave a step out: no line holds their value, so the line named is where the
# unchanged value is next used (grade/lines.py finds it, the report says so)
LEFT_OUT = frozenset({"mask_ignored", "mask_after_softmax"})
