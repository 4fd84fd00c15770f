import sys

import pytest

from attnlab.cli import main


def test_without_transformers_the_hf_commands_say_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers now fails
    from attnlab.errors import UserError
    from attnlab.hf._need import transformers

    with pytest.raises(UserError, match=r"pip install 'attnlab\[hf\]'"):
        transformers()
    (tmp_path / "config.json").write_text("{}")
    assert main(["explore", "--hf", str(tmp_path), "--text", "ab"]) == 2
    assert main(["export-hf", str(tmp_path), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("pip install 'attnlab[hf]'" in line for line in err)
