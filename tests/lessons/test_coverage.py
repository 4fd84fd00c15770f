"""Every topic of the course texts (../shared/course/) is taught by a lesson step.

The table below was made by reading the four texts (the attention lesson, the NumPy mini project,
the article on attention and the seq2seq lesson) and listing what each teaches: its explanations,
examples, code, exercises, review questions and summary tables. Each topic names the lesson and
the step (or exercise) that teaches it, or ``quiz: words`` for a review question whose English
text contains those words. A topic whose step is missing fails; so does a step of lessons 1-5
that no topic names (a new step comes with its row here). Lessons 6 and 7 are written on another
branch: their rows are skipped while their folders are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlab.lessons import runner, source
from helpers import shared_folder

# (topic, lesson, step id | exercise id | "quiz: words")
TOPICS = [
    # the attention lesson (lesson-attention.txt)
    ("why a character needs its neighbours (明月 vs 明天)", 1, "averaging"),
    ("averaging the past with one lower-triangular matrix product", 1, "averaging"),
    ("queries and keys: dot-product scores, softmax to weights", 1, "query_key"),
    ("the size of the scores sharpens the softmax (scores × 5)", 1, "query_key"),
    ("values: what is handed over, separate from the key", 1, "values"),
    ("the causal mask: -inf before the softmax", 1, "causal_mask"),
    ("why divide by √d: the spread of dot products, saturated softmax", 1, "sqrt_d"),
    ("one full head: project, score, scale, mask, softmax, sum; vs PyTorch", 1, "full_head"),
    ("W_q, W_k, W_v are learned by gradient descent", 1, "learned"),
    ("the cost: a T × T table, quadratic in the length", 1, "cost"),
    ("exercise: the query of 光 set to [0, 1]", 1, "query"),
    ("exercise: drop the causal mask, compare with is_causal=False", 1, "no_mask"),
    ("exercise: time T = 1000, 2000, 4000", 1, "timing"),
    ("review: the roles of the query, the key and the value", 1, "quiz: key of a position"),
    ("review: how the causal mask works", 1, "quiz: with the causal mask"),
    ("review: why training needs the causal mask", 1, "quiz: need the causal mask"),
    ("review: why divide by √d", 1, "quiz: divided by √d"),
    ("attention is all you need: softmax(Q Kᵀ / √d) V", 1, "full_head"),
    ("embeddings: one-hot × matrix = a lookup, nn.Embedding, learned vectors", 1, "averaging"),
    ("weights × values, named at averaging and recalled for the head", 1, "averaging"),
    ("self-attention and causal defined where first used", 1, "causal_mask"),
    ("the / √8 of the mask code linked to the scaling step", 1, "sqrt_d"),
    ("the scaled standard deviation printed beside the unscaled one", 1, "sqrt_d"),
    ("the softmax gradient measured with and without √d (autograd)", 1, "sqrt_d"),
    ("the causal mask saves work only in kernels that skip future blocks", 1, "cost"),
    ("exercise: draw an attention heatmap with matplotlib yourself", 1, "heatmap"),
    # the mini project (miniproject-self-attention-numpy.txt)
    ("Q = X W_Q, K = X W_K, V = X W_V on a 3 × 2 input", 2, "projections"),
    ("the score table Q Kᵀ / √d", 2, "score_table"),
    ("the mask table: np.tril, np.where(mask, scores, -inf)", 2, "mask_table"),
    ("row-wise softmax along axis=1 with keepdims", 2, "keepdims"),
    ("the weights with and without the mask, as tables", 2, "weights_tables"),
    ("checked against PyTorch's scaled_dot_product_attention", 2, "against_torch"),
    ("in practice: many heads, stacked layers, batches (B, H, T, d)", 2, "batch_shapes"),
    ("write masked self-attention yourself", 2, "self_attention"),
    ("comparison table: RNN, LSTM/GRU, seq2seq + attention, Transformer", 2, "comparison"),
    ("the comparison table's strengths column (good at)", 2, "comparison"),
    ("heads introduced before the batches use them: H computations, outputs joined", 2, "heads"),
    ("the recurrence h_t = tanh(x_t W_x + h_(t-1) W_h + b) by hand vs torch.nn.RNN", 2, "rnn"),
    ("True means may attend in SDPA, may not in nn.MultiheadAttention", 2, "batch_shapes"),
    ("review: the mask convention of nn.MultiheadAttention", 2, "quiz: nn.multiheadattention"),
    ("chapter recap: the Transformer block, residuals, layer norm, feed-forward", 6, "block"),
    ("chapter recap: encoder vs decoder, BERT vs GPT", 6, "encoder_decoder"),
    ("chapter recap: language models predict the next token", 6, "language_model"),
    ("chapter recap: perplexity", 6, "perplexity"),
    ("chapter recap: temperature", 6, "temperature"),
    ("chapter recap: RNN, LSTM, GRU and BPTT, measured side by side", 6, "rnn_table"),
    ("chapter recap: seq2seq trained with teacher forcing", 7, "teacher_forcing"),
    ("chapter recap: an LSTM step by hand (gates, the cell state) vs nn.LSTM", 4, "lstm_step"),
    ("chapter recap: a GRU step by hand (update and reset gates) vs nn.GRU", 4, "gru_step"),
    ("chapter recap: vanishing gradients measured through time", 4, "vanishing"),
    ("chapter recap: exploding gradients and gradient clipping", 4, "clipping"),
    ("exercise: clip a gradient by its norm, not by value", 4, "clip"),
    # the article (article-attention-mechanism.txt)
    ("the seq2seq bottleneck: one fixed-size context vector", 4, "bottleneck"),
    ("Bahdanau attention: the decoder looks at every encoder state", 4, "which_query"),
    ("score functions: dot, scaled dot, general, additive, concat", 4, "score_functions"),
    ("self-attention relates any two positions directly", 4, "types"),
    ("multi-head: one projection split into h heads of d_k = d_model / h", 3, "split_heads"),
    ("choosing h: a divisor of d_model, 8 to 16, d_model 512 -> d_k 64", 3, "choosing_h"),
    ("self-attention ignores order (permutation)", 3, "permutation"),
    ("the sinusoidal positional encoding", 3, "sinusoidal"),
    ("PE[pos + k] is a linear function of PE[pos]", 3, "shift_is_linear"),
    ("the encoding extends beyond the trained length", 3, "beyond"),
    (
        "PyTorch scaled_dot_product_attention with (batch, heads, T, d_k) and masks",
        2,
        "batch_shapes",
    ),
    ("mask shapes (B, 1, 1, S) and (B, 1, T, S), broadcasting", 2, "batch_shapes"),
    ("bool masks vs additive float masks", 2, "batch_shapes"),
    ("a PyTorch MultiHeadAttention module: nn.Linear, view, transpose", 3, "mha_module"),
    ("the (32, 100, 512) example and its (32, 8, 100, 100) weights", 3, "mha_module"),
    (
        "a PositionalEncoding module: div_term in log space, register_buffer, dropout",
        3,
        "pe_module",
    ),
    ("visualising attention weights", 7, "alignment"),
    ("visualising attention weights per head of a trained model", 6, "heads"),
    ("write multi-head attention yourself", 3, "heads"),
    ("write the positional encoding yourself", 3, "encoding"),
    # the seq2seq lesson (lesson-8-attention-seq2seq.txt)
    ("the bottleneck shown: a fixed context degrades as the input grows", 7, "bottleneck"),
    ("Q: decoder state, K: encoder states, V = K in basic attention", 4, "bottleneck"),
    ("a bidirectional encoder (the GRU lesson 7 builds)", 4, "bidirectional"),
    ("an encoder-decoder walk-through on a short sentence", 4, "walkthrough"),
    ("write Bahdanau's additive attention yourself", 4, "additive"),
    ("masked_fill(mask == 0, -1e9) vs -inf, a fully masked row", 2, "fully_masked"),
    ("a padding mask for a batch of sequences of different lengths", 2, "padding"),
    ("self-attention for 'The cat sat on the mat'", 4, "cat_sat"),
    ("kinds of attention: Bahdanau, Luong, self, cross, causal self", 4, "types"),
    ("Luong attention: the query h_t after the recurrent step", 4, "which_query"),
    ("an encoder-decoder model with attention", 7, "seq2seq_model"),
    ("seq2seq with attention trained: Bahdanau vs Luong vs none", 7, "compare_attention"),
    ("training a seq2seq model live", 7, "train_seq2seq"),
    ("training a small GPT live", 6, "train_gpt"),
    ("review: what the bottleneck of seq2seq is", 4, "quiz: bottleneck"),
    ("review: the source of K and V in cross-attention", 4, "quiz: cross-attention"),
    ("review, own words: query, keys and values in seq2seq", 4, "quiz: query, keys and values"),
    # long contexts (the lesson's "models optimise attention for long contexts")
    ("the table is the cost: memory of T × T", 5, "the_table"),
    ("the online softmax: exact attention in tiles", 5, "online_softmax"),
    ("merging partial attentions by log-sum-exp", 5, "merge_halves"),
    ("the KV cache and grouped-query attention", 5, "kv_cache"),
    ("ring attention across processes", 5, "ring"),
    # each text ends with a summary table: so does each lesson
    *((f"summary table of lesson {n}", n, "recap") for n in range(1, 8)),
]

PRESENT = set(source.lessons())


def _ids(number: int) -> set[str]:
    return {c.id for c in source.cells(number) if c.kind in ("step", "exercise")}


@pytest.mark.parametrize(("topic", "number", "where"), TOPICS, ids=[t[0][:60] for t in TOPICS])
def test_every_topic_of_the_course_is_taught_by_a_step(topic, number, where):
    if number not in PRESENT:
        pytest.skip(f"lesson {number} is written on the lessons-train branch; not here yet")
    if where.startswith("quiz: "):
        words = where.removeprefix("quiz: ").lower()
        questions = [q.question.lower() for q in source.prose(number, "en").quiz]
        assert any(words in q for q in questions), (topic, questions)
        return
    assert where in _ids(number), f"{topic}: lesson {number} has no step {where!r}"
    for lang in source.languages(number):
        assert source.prose(number, lang).texts.get(where), (topic, lang)  # and it explains


def test_every_step_of_lessons_1_to_5_teaches_a_listed_topic():
    named = {(n, w) for _, n, w in TOPICS}
    for number in range(1, 6):
        steps = [c.id for c in source.cells(number) if c.kind == "step"]
        missing = [s for s in steps if (number, s) not in named]
        assert not missing, f"lesson {number}: steps with no topic in TOPICS: {missing}"


def test_the_count_matches_the_issue():
    # issue 19 counted 41 topics in the texts (27 covered, 9 partly, 5 missing); this table
    # splits some of them finer, and adds lesson 5's and the summaries
    assert len(TOPICS) >= 41
    assert len({t for t, _, _ in TOPICS}) == len(TOPICS)  # no topic listed twice


# --- the review's own list (issue 31: "the coverage test maps every item of the review's list") ---
#
# ``../shared/reviews/course-coverage-review-2026-12.md`` numbers 67 items of the four course texts
# and gives each a status (covered, partial, missing, WRONG). Every item maps to the lesson step
# that teaches it now: (lesson, step id | "intro" | "quiz: words", phrase). For the items the
# review found lacking, the phrase is a few words of that step's English prose that carry the fix,
# so deleting the fix fails the test. Covered items may carry a phrase too, where the review's
# note pointed at a wrong sentence that has since been corrected (its §4, C1-C12).

REVIEW_ITEMS: dict[int, tuple[int, str, str | None]] = {
    1: (1, "intro", '明 is "bright" in 明月'),
    2: (1, "intro", "光 is the right pick only because 明月 came a moment before"),
    3: (1, "averaging", None),
    4: (1, "averaging", "Attention keeps exactly this product and changes only where the weights"),
    5: (1, "averaging", None),
    6: (1, "query_key", "large when the two point the same way"),
    7: (1, "query_key", None),
    8: (1, "query_key", None),
    9: (1, "learned", None),
    10: (1, "values", "The weights say how much; the values say what."),
    11: (1, "causal_mask", None),
    12: (
        1,
        "causal_mask",
        "**Self-attention**: the queries, the keys and the values all come from",
    ),
    13: (1, "sqrt_d", "Step 4 divided its scores by √8 without comment"),
    14: (1, "sqrt_d", None),
    15: (1, "sqrt_d", "autograd's gradient of the softmax with respect to its scores"),
    16: (1, "sqrt_d", "Divided by √d, the scores are back to a spread of about 1"),
    17: (1, "full_head", None),
    18: (1, "learned", None),
    19: (1, "full_head", None),
    20: (1, "cost", None),
    21: (1, "query", None),
    22: (1, "no_mask", None),
    23: (1, "timing", None),
    24: (1, "quiz: what do the query, the key and the value", None),
    25: (1, "quiz: how is the causal mask applied", "before the softmax"),
    26: (1, "quiz: why are the scores divided by √d", None),
    27: (2, "projections", None),
    28: (2, "score_table", None),
    29: (2, "mask_table", None),
    30: (2, "keepdims", None),
    31: (2, "weights_tables", None),
    32: (2, "weights_tables", None),
    33: (2, "against_torch", None),
    34: (3, "split_heads", None),
    35: (2, "comparison", "| good at |"),
    36: (1, "averaging", "an embedding is a matrix product that is really a lookup"),
    37: (2, "rnn", "h_t = tanh(x_t W_x + h_(t-1) W_h + b)"),
    38: (4, "lstm_step", "the cell c, and three gates"),
    39: (7, "teacher_forcing", None),
    40: (6, "block", None),
    41: (6, "encoder_decoder", "The mask is not the whole difference"),
    42: (6, "language_model", None),
    43: (6, "perplexity", None),
    44: (6, "temperature", None),
    45: (6, "temperature", "what large language models do, and it shares their limits"),
    46: (7, "bottleneck", "A test of length alone"),
    47: (4, "which_query", None),
    48: (4, "score_functions", None),
    49: (2, "comparison", "When a Transformer generates text it still produces one token"),  # C8
    50: (3, "split_heads", None),
    51: (3, "split_heads", "stored next to each other in one d_model × d_model matrix"),  # C12
    52: (3, "choosing_h", "grow h-fold"),  # C6
    53: (3, "permutation", None),
    54: (3, "pe_module", None),
    55: (3, "shift_is_linear", None),
    56: (3, "shift_is_linear", "arbitrary projections (an untrained one, say)"),
    57: (3, "beyond", None),
    58: (2, "batch_shapes", "but `nn.MultiheadAttention` and the nn.Transformer"),  # C1
    59: (3, "mha_module", None),
    60: (1, "heatmap", "matplotlib"),
    61: (4, "bottleneck", "they are the keys"),
    62: (4, "cat_sat", None),
    63: (4, "types", None),
    64: (4, "which_query", None),
    65: (2, "fully_masked", None),
    66: (7, "compare_attention", "This run fell short"),
    67: (4, "walkthrough", 'on "je suis un chat" → "I am a cat"'),
}

# items whose fix spans several steps: the further steps, each with the words that show it
REVIEW_ALSO: dict[int, list[tuple[int, str, str]]] = {
    38: [
        (4, "gru_step", "The GRU drops the separate cell and gets by with two gates"),
        (4, "vanishing", "an LSTM whose forget gate is held near 1"),
        (4, "clipping", "`nn.utils.clip_grad_norm_`"),
    ],
    10: [(1, "full_head", "values in step 3")],  # P5: the head recalls the values step
    25: [(1, "quiz: need the causal mask", "a causal kernel may skip future blocks")],  # C2
    46: [(4, "bottleneck", "is measured in lesson 7")],
    60: [(6, "heads", "the chance level"), (7, "alignment", "cannot pass for one that finds")],
    61: [(4, "additive", "the keys serve as the values")],
    66: [(7, "train_seq2seq", "number of steps ({STEPS}) for each")],
}

LACKING = {"partial", "missing", "wrong"}


def reviews_folder() -> Path | None:
    return shared_folder("reviews")
    return None


REVIEW = "course-coverage-review-2026-12.md"


def review_statuses() -> dict[int, str]:
    """{item number: status} from the review's topic table (rows ``| n | item | text | where |
    status | note |``); skips when the review is not beside the repository."""
    folder = reviews_folder()
    if folder is None or not (folder / REVIEW).is_file():
        pytest.skip(f"../shared/reviews/{REVIEW} is absent (reviews live beside the repo)")
    statuses = {}
    for line in (folder / REVIEW).read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) >= 6 and cells[0].isdigit():
            statuses[int(cells[0])] = cells[4].strip("*").lower()
    return statuses


def _flat(text: str) -> str:
    return " ".join(text.split())


def _en_text(number: int, where: str) -> str:
    """The English a learner reads at ``where``: a step's prose, the intro, or a whole question."""
    prose = source.prose(number, "en")
    if where == "intro":
        return _flat(prose.intro)
    if where.startswith("quiz: "):
        words = where.removeprefix("quiz: ").lower()
        q = next(q for q in prose.quiz if words in q.question.lower())
        return _flat(" ".join([q.question, *q.choices, *q.why, q.explanation, q.model_answer]))
    return _flat(prose.texts[where])


def _taught(number: int, where: str) -> None:
    """``where`` exists in lesson ``number`` and says something in every language."""
    for lang in source.languages(number):
        prose = source.prose(number, lang)
        if where == "intro":
            assert prose.intro.strip(), (number, lang)
        elif where.startswith("quiz: "):
            words = where.removeprefix("quiz: ").lower()
            en = [q.question.lower() for q in source.prose(number, "en").quiz]
            k = next((i for i, q in enumerate(en) if words in q), None)
            assert k is not None, f"lesson {number}: no question with {words!r}"
            assert prose.quiz[k].question.strip(), (number, lang, k)
        else:
            assert where in _ids(number), f"lesson {number} has no step {where!r}"
            assert prose.texts.get(where, "").strip(), (number, lang, where)


def test_every_numbered_item_of_the_review_has_a_mapping():
    statuses = review_statuses()
    assert len(statuses) == 67, sorted(statuses)  # the review counts 67 items
    assert set(statuses) == set(REVIEW_ITEMS), set(statuses) ^ set(REVIEW_ITEMS)
    assert set(statuses.values()) <= {"covered"} | LACKING, set(statuses.values())


@pytest.mark.parametrize("item", sorted(REVIEW_ITEMS))
def test_each_review_item_is_taught_and_its_fix_is_in_the_prose(item):
    number, where, phrase = REVIEW_ITEMS[item]
    if number not in PRESENT:
        pytest.skip(f"lesson {number} is not on this branch")
    _taught(number, where)
    if phrase is not None:
        assert _flat(phrase) in _en_text(number, where), (item, where, phrase)
    for n, w, p in REVIEW_ALSO.get(item, []):
        _taught(n, w)
        assert _flat(p) in _en_text(n, w), (item, w, p)


def test_each_item_the_review_found_lacking_names_the_words_of_its_fix():
    lacking = {n for n, s in review_statuses().items() if s in LACKING}
    assert len(lacking) == 17  # 13 partial, 3 missing, 1 wrong, as the review counts them
    without = sorted(n for n in lacking if REVIEW_ITEMS[n][2] is None)
    assert not without, f"items the review found lacking, mapped without a phrase: {without}"


# --- concepts in order (issue 31, item 8; the review's P5) ---
#
# A step that relies on a concept comes after the step that teaches it, and points back to it by
# the number the learner sees in its heading. Each row: (review item, lesson, the step that
# teaches, the step that relies on it, words of the later step's English prose with {n} for the
# teaching step's number). Moving a step back behind its user, or renumbering the steps without
# the prose that names them, fails here.
IN_ORDER = [
    (6, 1, "query_key", "values", "Step {n} decided how much 光 takes from each position"),
    (10, 1, "values", "full_head", "values in step {n}"),
    (11, 1, "causal_mask", "full_head", "the mask in step {n}"),
    (13, 1, "causal_mask", "sqrt_d", "Step {n} divided its scores by √8"),
    (14, 1, "sqrt_d", "full_head", "√d in step {n}"),
]


@pytest.mark.parametrize(("item", "number", "teaches", "uses", "words"), IN_ORDER)
def test_a_concept_is_taught_before_the_step_that_relies_on_it(item, number, teaches, uses, words):
    if number not in PRESENT:
        pytest.skip(f"lesson {number} is not on this branch")
    at = {c.id: k for k, c in enumerate(runner.steps(number), 1)}  # the numbers in the headings
    assert at[teaches] < at[uses], (item, f"{teaches} is step {at[teaches]}, {uses} {at[uses]}")
    assert _flat(words.format(n=at[teaches])) in _en_text(number, uses), (item, uses, words)
