"""Make the trained weights that lessons 6 and 7 ship, by running the lessons' own code.

Each lesson trains a few models live for a short curve, then studies models that trained much
longer: by default the ones shipped in the package (``content/lessonN/weights.pt``). This
script makes those files. It runs the lesson's setup and steps up to the one that trains, in a
fresh session with ``FULL = True`` and the steps the lesson names in ``SHIPPED_STEPS``, then
saves every model trained there, in half precision (half the size; the lesson loads them into
float32 models). The training is by steps from the seed on one thread, so the file comes out
the same, byte for byte, on every run on the same kind of machine.

    python tools/make_lesson_weights.py            # both lessons, into the package folder
    python tools/make_lesson_weights.py 7 --steps 3 --out /tmp/w   # a quick try, elsewhere

Lesson 7 takes about 5 minutes of CPU, lesson 6 about 8 (one thread); see the README.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import time
from pathlib import Path

import torch

from attnlab.lessons import runner, source

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnlab" / "lessons" / "content"
# per lesson: the step that trains the studied models, and the models it leaves, by name
TRAINS = {7: "train_seq2seq", 6: "rnn_table"}


def shipped_steps(number: int) -> int:
    """The steps lesson ``number`` says its shipped models trained for (SHIPPED_STEPS)."""
    setup = source.cells(number)[0].code
    line = next(x for x in setup.splitlines() if x.startswith("SHIPPED_STEPS = "))
    return int(line.split("=", 1)[1].split("#", 1)[0])


def trained(number: int, steps: int) -> tuple[dict[str, torch.nn.Module], dict]:
    """The models lesson ``number`` trains with ``FULL = True`` and ``STEPS = steps``, by
    name, and what else the file records."""
    ids = [c.id for c in runner.steps(number)]
    session = runner.Session(number, 0, "en", overrides={"STEPS": steps, "FULL": True})
    session.steps(upto=ids.index(TRAINS[number]) + 1)
    ns = session.ns
    if number == 7:
        return dict(ns["live"]), {}
    models = {f"{kind}/{seed}": model for (kind, seed), model in ns["runs"].items()}
    return models, {"seeds": ns["SEEDS"]}


def weights_bytes(models: dict[str, torch.nn.Module], steps: int, extra: dict) -> bytes:
    """The file: per model name its state dict in float16, the steps they trained and
    ``extra`` (lesson 6: how many seeds of each model)."""
    state = {
        name: {k: v.detach().half() for k, v in m.state_dict().items()}
        for name, m in models.items()
    }
    buf = io.BytesIO()
    torch.save({"steps": steps, **extra, **state}, buf)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("lessons", nargs="*", type=int, default=[7, 6], help="6, 7 or both")
    p.add_argument("--steps", type=int, help="training steps (default: the lesson's own)")
    p.add_argument("--out", type=Path, help="folder for lessonN/weights.pt (default: package)")
    a = p.parse_args(argv)
    for number in a.lessons:
        if number not in TRAINS:
            print(f"lesson {number} ships no weights; expected 6 or 7", file=sys.stderr)
            return 2
        steps = a.steps or shipped_steps(number)
        if steps < 1:
            print(f"--steps must be at least 1, got {steps}", file=sys.stderr)
            return 2
        start, cpu = time.perf_counter(), time.process_time()
        models, extra = trained(number, steps)
        data = weights_bytes(models, steps, extra)
        path = (a.out or PACKAGE) / f"lesson{number}" / "weights.pt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        took = f"{time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU"
        digest = hashlib.sha256(data).hexdigest()[:16]
        print(f"lesson {number}: {steps} steps, {len(data):,} bytes, sha256 {digest}…, {took}")
        print(f"  -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
