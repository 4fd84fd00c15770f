import argparse
import shlex
import subprocess
import sys

import pytest

from attnlab.cli import build_parser, main


def test_help_lists_commands(capsys):
    assert main([]) == 2
    assert "check" in capsys.readouterr().out


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "attnlab", "check", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "1e-10" in out.stdout


def test_bad_arguments_are_usage_errors(capsys):
    assert main(["check", "--dtype", "int8"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'int8'" in err and "float32" in err and len(err.splitlines()) == 1


def test_debug_shows_the_traceback_and_keeps_the_exit_status(capsys, tmp_path, monkeypatch):
    """A mistake the user can fix exits 2 with or without --debug; --debug adds where it was
    raised, and the one line still ends the output (a UserError and a path's OSError)."""
    missing = str(tmp_path / "nothing.py")
    assert main(["grade", missing]) == 2
    plain = capsys.readouterr().err
    assert len(plain.splitlines()) == 1 and "nothing.py" in plain
    assert main(["--debug", "grade", missing]) == 2
    debug = capsys.readouterr().err
    assert "Traceback (most recent call last)" in debug and debug.endswith(plain)
    from attnlab.commands import check

    def unwritable(args):
        raise PermissionError(13, "Permission denied", str(tmp_path / "out"))

    monkeypatch.setattr(check, "run", unwritable)
    assert main(["check"]) == 2
    plain = capsys.readouterr().err
    assert plain == f"attnlab check: error: cannot use {tmp_path / 'out'}: Permission denied\n"
    assert main(["--debug", "check"]) == 2
    debug = capsys.readouterr().err
    assert "PermissionError" in debug and debug.endswith(plain)


def test_a_typo_in_a_name_suggests_the_name(capsys):
    assert main(["lessen", "list"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'lesson'?" in err and len(err.splitlines()) == 1
    assert main(["lesson", "1", "--lang", "jaa"]) == 2
    assert "did you mean 'ja'?" in capsys.readouterr().err
    assert main(["xyzzy"]) == 2  # nothing close: the list of commands instead
    err = capsys.readouterr().err
    assert "did you mean" not in err and "lesson" in err and "explore" in err
    for argv, hint in (
        (["lesson", "lst"], "did you mean 'list'?"),
        (["bench", "--methods", "naive,tild"], "unknown name 'tild'; did you mean 'tiled'?"),
        (["conform", "x.py:f", "--features", "causl"], "did you mean 'causal'?"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert hint in err and len(err.splitlines()) == 1, err


def test_a_module_name_that_is_a_file_here_is_pointed_to_its_file_form(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "myattn.py").write_text("def attn(q, k, v, **kw):\n    return q\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])  # as attnlab's
    assert main(["conform", "myattn:attn", "--features", "basic"]) == 2
    assert "(a file here: myattn.py:attn)" in capsys.readouterr().err


def test_an_unknown_flag_points_to_the_commands_own_help(capsys):
    for argv, flag, prog in (
        (["explore", "--playgrond"], "--playgrond", "attnlab explore"),
        (["train", "gpt", "--max-iterz", "3"], "--max-iterz 3", "attnlab train gpt"),
        (["--bogus"], "--bogus", "attnlab"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err == f"{prog}: error: unrecognized arguments: {flag} (see '{prog} --help')\n"


def test_a_subcommands_mistake_is_named_by_its_whole_command(tmp_path, capsys):
    """'attnlab viz gpt RUN --text ...' with no run there: the error line names 'attnlab viz
    gpt', as argparse's own errors for that command do, not 'attnlab viz'."""
    assert main(["viz", "gpt", str(tmp_path / "norun"), "--text", "ab"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnlab viz gpt: error: ") and "norun" in err, err
    assert len(err.splitlines()) == 1


def test_help_shows_each_flags_default(capsys):
    assert main(["serve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "language of the page (default: en)" in out
    assert out.count("default") == 2  # --port says its own, once; no "default: None"
    assert main(["check", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: None)" not in out and "(default: False)" not in out


def _flags(parser, path=("attnlab",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _flags(sub, (*path, name))
        elif action.option_strings and action.help != argparse.SUPPRESS:
            yield " ".join(path), action


def test_every_flag_of_every_command_says_what_it_does(capsys):
    # argparse prints no line, so no default either, for a flag without help text
    bare = [
        f"{command} {action.option_strings[0]}"
        for command, action in _flags(build_parser())
        if not action.help
    ]
    assert bare == []
    assert main(["sample", "--help"]) == 0
    assert "(default: 500)" in " ".join(capsys.readouterr().out.split())


def test_import_is_light_and_ref_never_imports_torch():
    code = (
        "import sys, attnlab, attnlab.ref; "
        "bad = [m for m in ('torch', 'matplotlib', 'tqdm') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_grading_a_file_never_imports_torch(tmp_path):
    # the parser of every command is built for any command: none of them may pull in torch
    # (1.6 s of the 2.5 s a single `attnlab grade FILE` took before)
    import subprocess
    import sys

    f = tmp_path / "softmax.py"
    f.write_text(
        "import numpy as np\n\ndef softmax_rows(x):\n"
        "    e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n"
    )
    code = (
        "import sys\nfrom attnlab.cli import main\n"
        f"rc = main(['grade', {str(f)!r}, '--exercise', 'softmax_rows', '--no-sandbox'])\n"
        "print(rc, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[-2:] == ["0", "False"], out.stderr[-2000:]


def test_a_path_that_cannot_be_written_is_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "afile").write_text("mine\n")
    bad = str(tmp_path / "afile" / "page.html")
    assert main(["explore", "--playground", "-o", bad]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "afile" in err and "folder is needed" in err
    assert (tmp_path / "afile").read_text() == "mine\n"


@pytest.mark.parametrize(
    ("argv", "dest"),
    [
        (["grade", "hw.py"], "output"),
        (["conform", "m:f"], "output"),
        (["explore", "--playground"], "out"),
        (["exercise", "autograder", "self_attention"], "out"),
        (["exercise", "start", "self_attention"], "out"),
    ],
)
def test_every_command_that_writes_a_file_takes_o_output_and_out(argv, dest):
    """One spelling learned works everywhere: -o, --output and --out name the same option."""
    for flag in ("-o", "--output", "--out"):
        args = build_parser().parse_args([*argv, flag, "x.out"])
        assert getattr(args, dest) == "x.out", (argv, flag)


def _parsers(parser, path=("attnlab",)):
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_help_fits_80_columns_and_its_examples_are_whole_commands_that_parse(monkeypatch):
    from attnlab.tables import display_width

    monkeypatch.setenv("COLUMNS", "80")
    parser, shown = build_parser(), 0
    for command, sub in _parsers(build_parser()):
        text = sub.format_help()
        wide = [line for line in text.splitlines() if display_width(line) > 80]
        assert wide == [], command
        for line in text.split("examples:\n" if "examples:\n" in text else "example:\n")[1:]:
            for example in [x.strip() for x in line.splitlines() if x.startswith("  attnlab ")]:
                parser.parse_args(shlex.split(example)[1:])  # exits 2 if it does not parse
                shown += 1
    assert shown >= 15  # one to a line: "attnlab lesson 1 --lang ja" is not cut after "lesson"
