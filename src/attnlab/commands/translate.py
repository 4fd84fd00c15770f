"""``attnlab translate``: a date to an ISO date with a trained seq2seq run, and its alignment."""

from __future__ import annotations

from ._args import check_outputs, png_path

NAME = "translate"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="turn a date into an ISO date with a trained seq2seq run, showing the alignment",
        description="Print the ISO date for TEXT with the model's confidence (its least sure "
        "character's probability) and the attention alignment (input x output characters) as "
        "a text heatmap; --plot also writes it as a PNG. An answer that is not a real date is "
        "marked INVALID, one below 0.9 confidence UNSURE; either exits 1.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder of 'attnlab train seq2seq'")
    p.add_argument(
        "text", metavar="TEXT", help="a date written out, e.g. 'the 3rd of march 2021' (in quotes)"
    )
    p.add_argument(
        "--plot", type=png_path, metavar="FILE.png", help="also write the alignment as a PNG"
    )
    p.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.plot, "--plot", "file"))
    from ..tables import text_heatmap
    from ..train import load_seq2seq, translate

    model = load_seq2seq(a.run_dir)
    t = translate(model, a.text)
    print(t.verdict())
    if t.weights is None:
        print("(this model has no attention: nothing to align)")
    else:
        whole = (None, None)  # every input and output character, however long the date
        print(text_heatmap(t.weights.numpy(), t.text, a.text, 0.0, 1.0, None, whole))
        if a.plot:
            from ..viz import plot_alignment

            plot_alignment(t.weights.numpy(), a.text, t.text, a.plot, title=f"{a.text} -> {t.text}")
            print(f"alignment written to {a.plot}")
    return 0 if not t.problem and not t.low_confidence else 1
