import subprocess
import sys

from attnlab.cli import main


def test_help_lists_commands(capsys):
    assert main([]) == 2
    assert "check" in capsys.readouterr().out


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "attnlab", "check", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "1e-10" in out.stdout


def test_bad_arguments_are_usage_errors():
    out = subprocess.run(
        [sys.executable, "-m", "attnlab", "check", "--dtype", "int8"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_import_is_light_and_ref_never_imports_torch():
    code = (
        "import sys, attnlab, attnlab.ref; "
        "bad = [m for m in ('torch', 'matplotlib', 'tqdm') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
