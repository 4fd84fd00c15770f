"""``attnlab translate``: a date to an ISO date with a trained seq2seq run, and its alignment."""

from __future__ import annotations

NAME = "translate"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="turn a date into an ISO date with a trained seq2seq run, showing the alignment",
        description="Print the ISO date for TEXT and the attention alignment (input x output "
        "characters) as a text heatmap; --plot also writes it as a PNG.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--plot", metavar="FILE.png")
    p.set_defaults(run=run)


def run(a) -> int:
    from ..train.seq2seq import load_seq2seq, plot_alignment, text_heatmap, translate

    model = load_seq2seq(a.run_dir)
    out, w = translate(model, a.text)
    print(out)
    if w is None:
        print("(this model has no attention: nothing to align)")
        return 0
    print(text_heatmap(w.numpy(), a.text, out))
    if a.plot:
        plot_alignment(w.numpy(), a.text, out, a.plot, title=f"{a.text} -> {out}")
        print(f"alignment written to {a.plot}")
    return 0
