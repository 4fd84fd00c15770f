"""Our tokenizer and split against the published figures for the shared corpora."""

from pathlib import Path

import pytest

from attnlab.data import BUILTIN, CharTokenizer, TokenData, load_corpus
from attnlab.errors import UserError

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"{SHARED} is absent (shared corpora live beside the repo, never in it)",
)


@needs_shared
def test_tiny_shakespeare_matches_nanogpt_figures():
    text = load_corpus(SHARED / "tinyshakespeare.txt")
    tok = CharTokenizer.from_text(text)
    data = TokenData.from_text(text, tok)
    assert tok.vocab_size == 65  # nanoGPT's shakespeare_char: vocab 65, 1,003,854 / 111,540 tokens
    assert (len(data.train), len(data.val)) == (1_003_854, 111_540)


@needs_shared
def test_tang_quatrains_vocabulary():
    text = load_corpus(SHARED / "tang_quatrains5.txt")
    tok = CharTokenizer.from_text(text)
    assert len(text.splitlines()) == 3935 and tok.decode(tok.encode(text[:50])) == text[:50]


def test_builtin_corpus_and_bad_files(tmp_path):
    text = load_corpus(BUILTIN)
    assert len(text) > 100_000
    with pytest.raises(UserError, match="no such file"):
        load_corpus(tmp_path / "missing.txt")
    with pytest.raises(UserError, match="a folder, expected a UTF-8 text file"):
        load_corpus(tmp_path)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        load_corpus(bad)
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(ValueError, match="'z'"):
        tok.encode("az")
