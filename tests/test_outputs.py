"""Every command that writes checks its output path first: a path it cannot write is one line,
exit 2, with nothing run and nothing written.

"Nothing run" is checked with a sentinel rather than a clock: while the command runs, importing
any of the packages that do a command's work (torch, matplotlib, attnlab's lessons, book,
grader, models, trainer, ...) raises, so a check made after the work began fails the test.
"""

from __future__ import annotations

import argparse
import builtins
import importlib.util
import os

import pytest

from attnlab import cli
from attnlab.errors import UserError
from attnlab.files import check_output

WORK = (
    *("torch", "matplotlib", "transformers", "sphinx", "nbformat", "jupytext"),
    *(f"attnlab.{p}" for p in ("lessons", "book", "grade", "explore", "hf", "train", "models")),
    *(f"attnlab.{p}" for p in ("conform", "viz", "bench", "nn", "ref", "tables", "config")),
)


class WorkStarted(AssertionError):
    """A command imported what does its work before it refused its output path."""


def _imported(name: str, globals_: dict | None, fromlist, level: int) -> list[str]:
    """The absolute module names an import statement asks for (``from .. import x`` -> the
    package and ``package.x``)."""
    if level:
        base = importlib.util.resolve_name("." * level + name, (globals_ or {})["__package__"])
    else:
        base = name
    return [base, *(f"{base}.{x}" for x in fromlist or ())]


@pytest.fixture
def no_work(monkeypatch):
    """Run ``attnlab ARGS`` in this process with every work package's import refused."""
    real = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        for module in _imported(name, globals, fromlist, level):
            if any(module == w or module.startswith(w + ".") for w in WORK):
                raise WorkStarted(f"work began (import {module}) before the output was checked")
        return real(name, globals, locals, fromlist, level)

    def run(args: list[str]) -> int:
        parser = cli.build_parser()  # built first: some commands list their choices from tables
        monkeypatch.setattr(cli, "build_parser", lambda: parser)
        monkeypatch.setattr(builtins, "__import__", guarded)
        try:
            return cli.main(args)
        finally:
            monkeypatch.setattr(builtins, "__import__", real)

    return run


def writers(tmp_path, bad: str) -> list[tuple[list[str], str]]:
    """(arguments, the flag naming the output) for every output of every writing command,
    with ``bad`` as that output; the other arguments are real enough to be accepted."""
    sub = tmp_path / "sub.py"
    sub.write_text("def softmax_rows(x):\n    return x\n")
    run, png = str(tmp_path / "run"), f"{bad}.png"
    return [
        (["lesson", "1", "--export", bad], "--export"),
        (["lesson", "1", "--plots", bad], "--plots"),
        (["lesson", "1", "--exercise", "1", "--plots", bad], "--plots"),
        (["book", bad], "OUT_DIR"),
        (["book", str(tmp_path / "site"), "--cache", bad], "--cache"),
        (["grade", str(sub), "-o", bad], "-o"),
        (["grade", str(sub), "--plot", png], "--plot"),
        (["grade", str(tmp_path), "--feedback", bad], "--feedback"),
        (["explore", "--playground", "-o", bad], "-o"),
        (["export-hf", run, bad], "OUT"),
        (["train", "gpt", "--out", bad], "--out"),
        (["train", "seq2seq", "--out", bad], "--out"),
        (["conform", "attnlab.ref:scaled_dot_product_attention", "-o", bad], "-o"),
        (["conform", "attnlab.ref:scaled_dot_product_attention", "--save-failing", bad],
         "--save-failing"),
        (["viz", "gpt", run, "--text", "ab", "--out", png], "--out"),
        (["bench", "--plot", png], "--plot"),
        (["translate", run, "9 May 2018", "--plot", png], "--plot"),
        (["exercise", "start", "softmax_rows", bad], "FILE"),
        (["exercise", "start", "softmax_rows", "-o", bad], "-o"),
        (["exercise", "autograder", "softmax_rows", "-o", bad], "-o"),
    ]  # fmt: skip


def test_a_path_inside_a_file_is_one_line_exit_2_before_any_work(tmp_path, no_work, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("mine\n")
    cases = writers(tmp_path, str(blocker / "sub"))
    before = sorted(os.listdir(tmp_path))
    for args, flag in cases:
        bad = next(x for x in args if x.startswith(str(blocker)))
        assert no_work(args) == 2, args
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1, (args, err)
        words = args[:2] if args[0] in ("train", "viz") else args[:1]
        head = f"attnlab {' '.join(words)}: error: {flag} {bad!r}: {str(blocker)!r} is a file"
        assert err.startswith(head) and ", expected a" in err, (args, err)
    assert sorted(os.listdir(tmp_path)) == before  # nothing made
    assert blocker.read_text() == "mine\n"


def test_every_output_of_every_command_is_in_the_list(tmp_path):
    """A new writing command or output flag gets a case above: every argument that names a
    path (its metavar says DIR, FILE, OUT, PATH, .png or .html) and is not one of the known inputs is
    one of the outputs tested, and the other way round."""
    tested = {(args[0], flag) for args, flag in writers(tmp_path, "x")}
    found = set()
    for name, p in _subparsers(cli.build_parser()):
        for action in p._actions:
            positional = not action.option_strings
            meta = str(action.metavar or (action.dest if positional else "")).upper()
            names_a_path = any(w in meta for w in ("DIR", "FILE", "OUT", "PATH", ".PNG", ".HTML"))
            if names_a_path and action.dest not in INPUTS:
                found.add((name.split()[0], _flag(action)))
    assert found == tested


INPUTS = {"path", "roster", "corpus", "run_dir", "hf", "exercise_file"}  # paths read, never written


def _flag(action) -> str:
    """How an error names the argument: its first option string, or its metavar."""
    return (
        action.option_strings[0] if action.option_strings else action.metavar or action.dest.upper()
    )


def _subparsers(parser, name: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                full = f"{name} {sub_name}".strip()
                yield full, sub
                yield from _subparsers(sub, full)


@pytest.mark.parametrize(
    ("make", "kind", "words"),
    [
        ("file", "folder", "a file, expected a folder"),
        ("folder", "file", "a folder, expected a file name"),
        ("under_file", "folder", "is a file (a file stands where a folder is needed)"),
        ("under_file", "file", "is a file (a file stands where a folder is needed)"),
        ("dangling", "file", "a link that leads nowhere"),
    ],
)
def test_check_output_refuses_each_impossible_path(tmp_path, make, kind, words):
    f = tmp_path / "f"
    f.write_text("x")
    path = {
        "file": f,
        "folder": tmp_path,
        "under_file": f / "a" / "b",
        "dangling": tmp_path / "link",
    }[make]
    if make == "dangling":
        path.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UserError, match=r"^--x ") as e:
        check_output(path, "--x", kind)
    assert words in str(e.value) and "\n" not in str(e.value) and repr(str(path)) in str(e.value)


def test_check_output_accepts_what_can_be_written_and_makes_nothing(tmp_path):
    (tmp_path / "old.html").write_text("x")
    ok = [
        (tmp_path / "new" / "deeper", "folder"),  # made later, mkdir -p
        (tmp_path, "folder"),
        (tmp_path / "old.html", "file"),  # replaced later
        (tmp_path / "new" / "page.html", "file"),
        (tmp_path, "file or folder"),
        (tmp_path / "s.py", "file or folder"),
    ]
    for path, kind in ok:
        assert check_output(str(path), "-o", kind) == path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.html"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("kind", ["folder", "file"])
def test_check_output_refuses_proc_even_for_root(kind):
    """os.access lets root write anywhere, /proc included, where mkdir then fails: the check
    tries, so `--save-failing /proc/x` is refused before a conform run, not after it."""
    with pytest.raises(UserError, match=r"^--save-failing '/proc/attnlab-x/y': ") as e:
        check_output("/proc/attnlab-x/y", "--save-failing", kind)
    assert "nothing can be made in '/proc'" in str(e.value) or "cannot write in" in str(e.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write in any folder")
def test_check_output_refuses_a_folder_this_user_cannot_write_in(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for path, kind in ((locked, "folder"), (locked / "a" / "b.png", "file")):
            with pytest.raises(UserError, match="this user cannot write in"):
                check_output(path, "--plot", kind)
    finally:
        locked.chmod(0o700)
