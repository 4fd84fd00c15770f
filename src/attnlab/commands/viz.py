"""``attnlab viz gpt``: draw a trained GPT's attention weights on some text."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ._args import check_outputs, nonneg_int, png_path

NAME = "viz"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="draw attention weights of a trained model",
        description="'attnlab viz gpt RUN_DIR --text TEXT' draws every layer's and head's weights.",
    )
    vsub = p.add_subparsers(dest="viz_kind", metavar="MODEL", required=True)
    v = vsub.add_parser(
        "gpt",
        help="a GPT run's attention on some text",
        description="Run a trained GPT on TEXT and draw its attention weights as one PNG: a grid "
        "of heatmaps, a row per layer and a column per head, each with the text's characters "
        "as queries (rows) and keys (columns).",
    )
    v.add_argument("run_dir", metavar="RUN_DIR", help="a run folder of 'attnlab train gpt'")
    v.add_argument("--text", required=True, help="the text whose attention is drawn")
    v.add_argument("--layer", type=nonneg_int, help="only this layer (default: all)")
    v.add_argument("--head", type=nonneg_int, help="only this head (default: all)")
    v.add_argument("--out", type=png_path, metavar="FILE.png", help="default RUN_DIR/attention.png")
    v.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.out, "--out", "file"))
    import torch

    from ..train.lm import load_run
    from ..viz import head_grid, save

    model, tok, cfg = load_run(a.run_dir)
    ids = tok.encode(a.text)
    block = cfg["model"]["block_size"]
    if not 1 <= len(ids) <= block:
        raise UserError(f"--text must have 1..{block} characters (block_size), got {len(ids)}")
    with torch.no_grad():
        _, _, weights = model(torch.tensor([ids]), need_weights=True)
    w = torch.stack([x[0] for x in weights]).numpy()  # (L, H, T, T)
    L, H = w.shape[:2]
    for name, value, limit in (("layer", a.layer, L), ("head", a.head, H)):
        if value is not None and not 0 <= value < limit:
            raise UserError(f"--{name} must be in 0..{limit - 1}, got {value}")
    layers = [a.layer] if a.layer is not None else list(range(L))
    heads = [a.head] if a.head is not None else list(range(H))
    labels = [repr(c)[1:-1] if c.isspace() else c for c in a.text]
    fig = head_grid(
        w[layers][:, heads],
        labels,
        title=f"attention of {a.run_dir} on {a.text[:40]!r}",
        layers=layers,
        heads=heads,
    )
    out = a.out or str(Path(a.run_dir) / "attention.png")
    save(fig, out)
    print(f"wrote {out} ({len(layers)} layer(s) x {len(heads)} head(s), {len(ids)} tokens)")
    return 0
