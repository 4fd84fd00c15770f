"""The ``attnlab`` command: argparse subcommands, each mapped onto a typed config.

Every subcommand parses its arguments into a dataclass and calls one function that returns its
result; this module only prints. Errors a user can fix are one line on stderr (exit 2);
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import __version__


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit code 2."""


@dataclass(frozen=True)
class CheckConfig:
    seed: int = 0
    dtypes: tuple[str, ...] = ("float64", "float32")
    json: bool = False


def run_check(cfg: CheckConfig) -> int:
    import numpy as np

    from . import check

    rows = check.run_all(cfg.seed, tuple(np.dtype(d).type for d in cfg.dtypes))
    failed = [r for r in rows if not r.parity.ok]
    if cfg.json:
        print(json.dumps({"ok": not failed, "rows": check.to_json(rows)}, indent=2))
    else:
        print(check.format_table(rows))
        print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
        for r in failed:
            print(f"FAIL {r.function} [{r.case}, {r.dtype}]: {r.parity.message}")
    return 1 if failed else 0


@dataclass(frozen=True)
class LessonConfig:
    target: str = "1"  # a lesson number, or "list"
    lang: str = "en"
    seed: int = 0
    section: int | None = None
    plots: str | None = None
    exercise: int | None = None
    quiz: bool = False


def run_lesson(cfg: LessonConfig) -> int:
    from . import lessons

    if cfg.target == "list":
        print(lessons.list_lessons(cfg.lang))
        return 0
    try:
        number = int(cfg.target)
    except ValueError:
        raise UsageError(f"expected a lesson number or 'list', got {cfg.target!r}") from None
    chosen = [
        n
        for n, v in (("--section", cfg.section), ("--exercise", cfg.exercise), ("--quiz", cfg.quiz))
        if v
    ]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join(chosen)}")
    if cfg.quiz:
        lessons.run_quiz(number, cfg.lang)
    elif cfg.exercise is not None:
        lessons.run_exercise(number, cfg.exercise, cfg.lang, cfg.seed, cfg.plots)
    else:
        lessons.run(number, cfg.lang, cfg.seed, cfg.section, cfg.plots)
    return 0


@dataclass(frozen=True)
class GradeConfig:
    path: str
    exercise: str | None = None
    format: str = "text"
    timeout: float = 10.0
    lang: str = "en"
    seed: int | None = None  # None: a fresh seed per run, reported
    jobs: int | None = None
    memory_mb: int = 2048


def run_grade(cfg: GradeConfig) -> int:
    from . import grade
    from .grade import report

    path = Path(cfg.path)
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder")
    if cfg.exercise is not None and cfg.exercise not in grade.EXERCISES:
        raise UsageError(
            f"unknown exercise {cfg.exercise!r}; choose one of {', '.join(grade.EXERCISES)}"
        )
    import random

    seed = cfg.seed if cfg.seed is not None else random.SystemRandom().randrange(2**31)
    kw = dict(lang=cfg.lang, timeout=cfg.timeout, seed=seed, memory_mb=cfg.memory_mb)
    if path.is_dir():
        reports = grade.grade_dir(path, cfg.exercise, cfg.jobs, **kw)
        if cfg.format == "junit":
            print(report.junit(reports))
        elif cfg.format == "json":
            print(json.dumps([r.to_dict() for r in reports], indent=2, ensure_ascii=False))
        elif cfg.format == "csv":
            print(report.class_csv(reports), end="")
        else:
            print("\n\n".join(report.text(r, cfg.lang) for r in reports))
        print(report.class_summary(reports), file=sys.stderr)
        return 0 if all(r.passed for r in reports) else 1
    r = grade.grade_file(path, cfg.exercise, **kw)
    if cfg.format == "json":
        print(report.to_json(r))
    elif cfg.format == "junit":
        print(report.junit([r]))
    elif cfg.format == "csv":
        print(report.class_csv([r]), end="")
    else:
        print(report.text(r, cfg.lang))
    return 0 if r.passed else 1


def run_exercise_cmd(
    action: str, name: str | None, path: str | None, force: bool, lang: str
) -> int:
    from .grade import EXERCISES, write_starter

    if action == "list":
        width = max(map(len, EXERCISES))
        for ex in EXERCISES.values():
            where = f"  (lesson {ex.lesson})" if ex.lesson else ""
            print(f"{ex.name.ljust(width)}  {ex.summary(lang)}{where}")
        return 0
    if name is None:
        raise UsageError("exercise start needs a NAME (see 'attnlab exercise list')")
    try:
        written = write_starter(name, path, force)
    except FileExistsError as e:
        raise UsageError(str(e)) from None
    print(f"wrote {written}; fill in the TODO, then run: attnlab grade {written}")
    return 0


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def run_bench(cfg) -> int:
    from . import bench

    rows, roof = bench.run(cfg, progress=not cfg.json and sys.stderr.isatty())
    print(bench.to_json(rows, roof, cfg) if cfg.json else bench.table(rows, roof, cfg))
    if cfg.plot:
        bench.plot(rows, cfg, cfg.plot)
        if not cfg.json:
            print(f"plot written to {cfg.plot}")
    return 0


def _parse_sets(items: list[str] | None) -> tuple[dict, dict]:
    """--set key=value pairs -> (model overrides, train overrides); values parsed as JSON if
    they can be (numbers, true/false/null), else kept as strings. Unknown keys are errors."""
    from dataclasses import fields

    from .models import GPTConfig
    from .train import TrainConfig

    model_keys = {f.name for f in fields(GPTConfig)} - {"vocab_size"}
    train_keys = {f.name for f in fields(TrainConfig)}
    model, train = {}, {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if key in model_keys:
            model[key] = value
        elif key in train_keys:
            train[key] = value
        else:
            raise UsageError(
                f"unknown setting {key!r}; model: {sorted(model_keys)}; train: {sorted(train_keys)}"
            )
    return model, train


def run_train_gpt(a) -> int:
    from .data import BUILTIN
    from .train.lm import LMRunConfig, train_lm
    from .train.trainer import is_main_process

    model, train = _parse_sets(a.set)
    for key, value in (
        ("block_size", a.block_size),
        ("n_layer", a.n_layer),
        ("n_head", a.n_head),
        ("n_embd", a.n_embd),
        ("dropout", a.dropout),
        ("pos", a.pos),
    ):
        if value is not None:
            model[key] = value
    for key, value in (
        ("max_iters", a.max_iters),
        ("batch_size", a.batch_size),
        ("lr", a.lr),
        ("eval_interval", a.eval_interval),
        ("seed", a.seed),
        ("device", a.device),
        ("max_seconds", a.max_seconds),
    ):
        if value is not None:
            train[key] = value
    cfg = LMRunConfig(
        out=a.out,
        corpus=a.corpus or BUILTIN,
        preset=a.preset,
        model=model,
        train=train,
        resume=a.resume,
        progress=sys.stderr.isatty(),
    )
    result = train_lm(cfg)
    last = result.evals[-1] if result.evals else {}
    if is_main_process():  # under torchrun only rank 0 reports
        state = "interrupted; resume with --resume" if result.interrupted else "done"
        print(
            f"{state}: iter {result.iters}, val loss {last.get('val_loss', float('nan')):.4f} (ppl {last.get('val_ppl', float('nan')):.2f}), {result.tokens_per_s:,.0f} tokens/s; run in {a.out}"
        )
    return 130 if result.interrupted else 0


def run_sample(a) -> int:
    import torch

    from .train.lm import load_run

    model, tok, _ = load_run(a.run_dir, a.device)
    prompt = a.prompt if a.prompt is not None else ("\n" if "\n" in tok.chars else tok.chars[0])
    idx = torch.tensor([tok.encode(prompt)], dtype=torch.long, device=a.device)
    gen = torch.Generator(device=a.device).manual_seed(a.seed)
    sys.stdout.write(prompt)
    for t in model.generate(
        idx,
        a.max_new_tokens,
        a.temperature,
        a.top_k,
        a.top_p,
        generator=gen,
        use_cache=not a.no_cache,
    ):
        sys.stdout.write(tok.decode(t.tolist()))
        sys.stdout.flush()
    sys.stdout.write("\n")
    return 0


def run_viz_gpt(a) -> int:
    import torch

    from .train.lm import load_run
    from .viz import head_grid, save

    model, tok, cfg = load_run(a.run_dir)
    ids = tok.encode(a.text)
    if not 1 <= len(ids) <= cfg["model"]["block_size"]:
        raise UsageError(
            f"--text must have 1..{cfg['model']['block_size']} characters (block_size), got {len(ids)}"
        )
    with torch.no_grad():
        _, _, weights = model(torch.tensor([ids]), need_weights=True)
    w = torch.stack([x[0] for x in weights]).numpy()  # (L, H, T, T)
    L, H = w.shape[:2]
    for name, value, limit in (("layer", a.layer, L), ("head", a.head, H)):
        if value is not None and not 0 <= value < limit:
            raise UsageError(f"--{name} must be in 0..{limit - 1}, got {value}")
    layers = [a.layer] if a.layer is not None else list(range(L))
    heads = [a.head] if a.head is not None else list(range(H))
    w = w[layers][:, heads]
    labels = [repr(c)[1:-1] if c.isspace() else c for c in a.text]
    fig = head_grid(w, labels, title=f"attention of {a.run_dir} on {a.text[:40]!r}")
    out = a.out or str(Path(a.run_dir) / "attention.png")
    save(fig, out)
    print(f"wrote {out} ({len(layers)} layer(s) x {len(heads)} head(s), {len(ids)} tokens)")
    return 0


def run_train_seq2seq(a) -> int:
    from .train.seq2seq import Seq2SeqRunConfig, train_seq2seq

    _, train = _parse_sets(a.set)
    for key, value in (
        ("max_iters", a.max_iters),
        ("batch_size", a.batch_size),
        ("lr", a.lr),
        ("seed", a.seed),
        ("device", a.device),
        ("max_seconds", a.max_seconds),
        ("eval_interval", a.eval_interval),
    ):
        if value is not None:
            train[key] = value
    model = {k: v for k, v in (("hidden", a.hidden), ("emb", a.emb)) if v is not None}
    cfg = Seq2SeqRunConfig(
        out=a.out,
        attention=a.attention,
        model=model,
        train=train,
        resume=a.resume,
        progress=sys.stderr.isatty(),
    )
    result = train_seq2seq(cfg)
    last = result.evals[-1] if result.evals else {}
    state = "interrupted; resume with --resume" if result.interrupted else "done"
    print(
        f"{state}: iter {result.iters}, val exact match {100 * last.get('exact_match', 0):.2f}%, per char {100 * last.get('char_acc', 0):.2f}%; run in {a.out}"
    )
    return 130 if result.interrupted else 0


def run_translate(a) -> int:
    from .train.seq2seq import load_seq2seq, plot_alignment, text_heatmap, translate

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


def run_compare(a) -> int:
    if a.what == "lm":
        from .train.compare import compare_lm, format_rows

        rows = compare_lm(a.corpus, a.budget_seconds, a.seed, progress=sys.stderr.isatty())
        print(f"same data, {a.budget_seconds:g} s of training each, block 64, batch 16\n")
        print(format_rows(rows))
        return 0
    from .train.seq2seq import compare_seq2seq, format_comparison

    print(
        format_comparison(compare_seq2seq(a.budget_seconds, a.seed, progress=sys.stderr.isatty()))
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnlab",
        description="Attention mechanisms to learn, check, run and show.",
        epilog="Run 'attnlab COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "check",
        help="verify every NumPy reference function against PyTorch",
        description="Run every attnlab.ref function (and the torch weights path) against PyTorch "
        "on random inputs and print max |difference| per case. float64 must agree to 1e-10; "
        "float32 may err at most 2x as much as PyTorch's own float32 result. Exit 1 on any "
        "mismatch.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the random inputs (default 0)")
    p.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=["float64", "float32"],
        help="precision to check; repeat for several (default: both)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report instead of a table")
    p.set_defaults(
        handler=lambda a: run_check(
            CheckConfig(seed=a.seed, dtypes=tuple(a.dtypes or ("float64", "float32")), json=a.json)
        )
    )

    p = sub.add_parser(
        "lesson",
        help="run a lesson of the attention course (numbers computed live)",
        description="Run a lesson end to end: every number is computed as it runs, by attnlab's "
        "NumPy reference and PyTorch. 'attnlab lesson list' lists the lessons.",
        epilog="examples: attnlab lesson 1 --lang ja | attnlab lesson 2 --section 4 | "
        "attnlab lesson 1 --plots figs/ | attnlab lesson 1 --exercise 3 | attnlab lesson 3 --quiz",
    )
    p.add_argument("target", nargs="?", default="1", help="lesson number (default 1), or 'list'")
    p.add_argument(
        "--lang", choices=["en", "ja"], default="en", help="English (default) or Japanese"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the random examples (default 0)")
    p.add_argument("--section", type=int, metavar="K", help="run only section K")
    p.add_argument("--plots", metavar="DIR", help="also write the lesson's figures as PNG into DIR")
    p.add_argument("--exercise", type=int, metavar="K", help="run exercise K with its explanation")
    p.add_argument("--quiz", action="store_true", help="ask the review questions one at a time")
    p.set_defaults(
        handler=lambda a: run_lesson(
            LessonConfig(a.target, a.lang, a.seed, a.section, a.plots, a.exercise, a.quiz)
        )
    )

    p = sub.add_parser(
        "grade",
        help="grade a NumPy attention exercise against PyTorch and name the mistake",
        description="Grade FILE (.py or .ipynb) or every file in DIR. The learner's code runs in a "
        "separate process with a timeout and a memory limit; its results are compared here with "
        "PyTorch on fixed and random cases, and known mistakes are named with a hint. "
        "Exit 0 if every check passes, 1 if any fails, 2 on usage errors.",
        epilog="examples: attnlab grade solution.py | attnlab grade hw.ipynb --format json | "
        "attnlab grade submissions/ --exercise self_attention --format csv",
    )
    p.add_argument(
        "path", metavar="FILE|DIR", help="a .py or .ipynb submission, or a folder of them"
    )
    p.add_argument("--exercise", help="exercise name (default: detected from the function defined)")
    p.add_argument("--format", choices=["text", "json", "junit", "csv"], default="text")
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds per submission (default 10)",
    )
    p.add_argument("--lang", choices=["en", "ja"], default="en", help="language of hints")
    p.add_argument(
        "--seed",
        type=int,
        help="seed for the random cases (default: a fresh one, shown in the report)",
    )
    p.add_argument("--jobs", type=int, help="parallel gradings for a folder (default: CPU count)")
    p.add_argument(
        "--memory-mb", type=int, default=2048, help="memory limit per submission (default 2048)"
    )
    p.set_defaults(
        handler=lambda a: run_grade(
            GradeConfig(
                a.path, a.exercise, a.format, a.timeout, a.lang, a.seed, a.jobs, a.memory_mb
            )
        )
    )

    p = sub.add_parser(
        "exercise",
        help="list the exercises or write a starter file",
        description="'attnlab exercise list' shows the exercises; 'attnlab exercise start NAME "
        "[PATH]' writes a starter file with the contract and TODOs (never overwrites without --force).",
    )
    p.add_argument("action", choices=["list", "start"])
    p.add_argument("name", nargs="?", help="exercise name, for start")
    p.add_argument("file", nargs="?", help="where to write the starter (default NAME.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--lang", choices=["en", "ja"], default="en")
    p.set_defaults(handler=lambda a: run_exercise_cmd(a.action, a.name, a.file, a.force, a.lang))

    p = sub.add_parser(
        "bench",
        help="time and memory of attention against sequence length (naive, tiled, torch)",
        description="Lesson 1's exercise 3 as a tool: for each length T and method, the median "
        "time, growth per doubling of T, GFLOP/s (4*H*T^2*d, halved when causal), its share of "
        "this machine's measured matmul GFLOP/s, peak extra memory (each measurement in its own "
        "process) and the time relative to torch. Methods: naive, tiled, torch, tiled-bwd, torch-bwd.",
        epilog="examples: attnlab bench --causal | attnlab bench --lengths 4096 --methods tiled,torch "
        "--causal --repeats 5 | attnlab bench --plot bench.png",
    )
    p.add_argument(
        "--lengths",
        type=_int_list,
        default=(1000, 2000, 4000, 8000),
        help="comma-separated T values (default 1000,2000,4000,8000)",
    )
    p.add_argument(
        "--methods", default="naive,tiled,torch", help="comma-separated (default naive,tiled,torch)"
    )
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dim", type=int, default=64, help="head width d (default 64)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument(
        "--causal",
        action="store_true",
        help="causal attention (skips half the work where possible)",
    )
    p.add_argument(
        "--repeats", type=int, default=3, help="timed runs per measurement; the median is shown"
    )
    p.add_argument("--plot", metavar="FILE", help="write a log-log plot of time vs T (PNG)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def bench_handler(a):
        from .bench import BenchConfig

        methods = tuple(m.strip() for m in a.methods.split(",") if m.strip())
        return run_bench(
            BenchConfig(
                a.lengths, methods, a.heads, a.dim, a.dtype, a.causal, a.repeats, a.plot, a.json
            )
        )

    p.set_defaults(handler=bench_handler)

    p = sub.add_parser(
        "train",
        help="train a model (gpt, seq2seq) into a run directory",
        description="Train a model: 'attnlab train gpt --help', 'attnlab train seq2seq --help'.",
    )
    tsub = p.add_subparsers(dest="model_kind", metavar="MODEL", required=True)
    g = tsub.add_parser(
        "gpt",
        help="a character-level GPT",
        description="Train a character-level GPT on a UTF-8 text file (default: the Python reference "
        "text that ships with CPython). Writes config.json, tokenizer.json, checkpoint.pt (atomic), "
        "log.jsonl and loss.png into --out. Ctrl-C saves a checkpoint; --resume continues it. "
        "Data-parallel: torchrun --nproc_per_node=2 -m attnlab train gpt ...",
        epilog="presets: tiny (about a minute on 2 cores), nanogpt-cpu (nanoGPT's CPU recipe), gpu. "
        "Any field: --set n_kv_head=2 --set warmup_iters=200 ...",
    )
    g.add_argument("--corpus", metavar="FILE", help="UTF-8 text file (default: built-in)")
    g.add_argument(
        "--out", default="runs/gpt", metavar="DIR", help="run directory (default runs/gpt)"
    )
    g.add_argument("--preset", default="tiny", choices=["tiny", "nanogpt-cpu", "gpu"])
    g.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its checkpoint"
    )
    g.add_argument("--max-iters", type=int)
    g.add_argument("--batch-size", type=int)
    g.add_argument("--lr", type=float)
    g.add_argument("--eval-interval", type=int)
    g.add_argument("--max-seconds", type=float, help="stop after this much training time")
    g.add_argument("--block-size", type=int)
    g.add_argument("--n-layer", type=int)
    g.add_argument("--n-head", type=int)
    g.add_argument("--n-embd", type=int)
    g.add_argument("--dropout", type=float)
    g.add_argument("--pos", choices=["learned", "sinusoidal", "rope"])
    g.add_argument("--seed", type=int)
    g.add_argument("--device", choices=["cpu", "cuda", "auto"])
    g.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any GPTConfig or TrainConfig field"
    )
    g.set_defaults(handler=run_train_gpt)

    q = tsub.add_parser(
        "seq2seq",
        help="an encoder-decoder that turns dates into ISO dates",
        description="Train a seq2seq model on generated dates ('3 March 2021', '03/03/21', "
        "'2021年3月3日', ...) -> '2021-03-03'. Same trainer as the GPT: progress bar, eval "
        "(exact match on held-out dates), atomic checkpoints, --resume.",
    )
    q.add_argument(
        "--attention",
        default="bahdanau",
        choices=["none", "bahdanau", "luong-dot", "luong-general", "luong-concat"],
    )
    q.add_argument("--out", default="runs/seq2seq", metavar="DIR")
    q.add_argument("--resume", action="store_true")
    q.add_argument("--max-iters", type=int)
    q.add_argument("--max-seconds", type=float)
    q.add_argument("--batch-size", type=int)
    q.add_argument("--lr", type=float)
    q.add_argument("--eval-interval", type=int)
    q.add_argument("--hidden", type=int, help="encoder width per direction (default 64)")
    q.add_argument("--emb", type=int, help="embedding width (default 32)")
    q.add_argument("--seed", type=int)
    q.add_argument("--device", choices=["cpu", "cuda", "auto"])
    q.add_argument("--set", action="append", metavar="KEY=VALUE", help="any TrainConfig field")
    q.set_defaults(handler=run_train_seq2seq)

    p = sub.add_parser(
        "sample",
        help="generate text from a trained GPT",
        description="Stream text from the GPT in RUN_DIR, decoding with a key/value cache.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--prompt", help="text to continue (default: a newline)")
    p.add_argument("--max-new-tokens", type=int, default=500)
    p.add_argument("--temperature", type=float, default=0.8, help="0 = greedy (default 0.8)")
    p.add_argument("--top-k", type=int)
    p.add_argument("--top-p", type=float)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="re-run the whole context every token (slow; for comparison)",
    )
    p.set_defaults(handler=run_sample)

    p = sub.add_parser(
        "viz",
        help="draw attention weights of a trained model",
        description="'attnlab viz gpt RUN_DIR --text TEXT' draws every layer's and head's weights.",
    )
    vsub = p.add_subparsers(dest="viz_kind", metavar="MODEL", required=True)
    v = vsub.add_parser("gpt", help="a GPT run's attention on some text")
    v.add_argument("run_dir", metavar="RUN_DIR")
    v.add_argument("--text", required=True)
    v.add_argument("--layer", type=int)
    v.add_argument("--head", type=int)
    v.add_argument("--out", metavar="FILE.png", help="default RUN_DIR/attention.png")
    v.set_defaults(handler=run_viz_gpt)

    p = sub.add_parser(
        "translate",
        help="turn a date into an ISO date with a trained seq2seq run, showing the alignment",
        description="Print the ISO date for TEXT and the attention alignment (input x output "
        "characters) as a text heatmap; --plot also writes it as a PNG.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--plot", metavar="FILE.png")
    p.set_defaults(handler=run_translate)

    p = sub.add_parser(
        "compare",
        help="train competing models on the same budget and tabulate them",
        description="'attnlab compare lm': transformer vs RNN, LSTM and GRU character models on the "
        "same data and time budget (params, tokens/s, val loss, perplexity, a sample). "
        "'attnlab compare seq2seq': every attention kind and the no-attention baseline on dates.",
    )
    p.add_argument("what", choices=["lm", "seq2seq"])
    p.add_argument("--corpus", metavar="FILE", help="UTF-8 text (lm only; default: built-in)")
    p.add_argument(
        "--budget-seconds", type=float, default=60.0, help="training time per model (default 60)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=run_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except (UsageError, ValueError, TypeError, FileNotFoundError, OSError) as e:
        if args.debug:
            raise
        print(f"attnlab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
