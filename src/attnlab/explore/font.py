"""attnlab's CJK font, cut to the characters a page shows, inlined in the page as a @font-face.

The page's font stack starts with this family, for CJK characters only (``RANGE``): an
installed Noto Sans CJK where there is one, else this subset of the packaged font
(``attnlab/viz/assets/attnlab-cjk-sans.otf``, the one the figures use), so no character is
drawn as an empty box on a machine without CJK fonts; other characters keep the system's.
(First, because a web font later in the stack loads too late in Chromium: text drawn before
it came stays an empty box.) The subset holds only the page's characters: a few kilobytes
(fontTools, which matplotlib already needs, cuts it). Text with no CJK gets no font at all.
"""

from __future__ import annotations

import base64
import functools
import io
from importlib import resources

FAMILY = "attnlab CJK"
FIRST_CJK = 0x2E80  # CJK radicals and up: kana, ideographs, Hangul, full-width forms
RANGE = f"U+{FIRST_CJK:X}-FFFF, U+20000-3FFFF"  # the characters the family is used for
INSTALLED = ("Noto Sans CJK SC", "Noto Sans CJK JP")  # preferred where installed


def needed(text: str) -> str:
    """The distinct CJK characters of ``text``, in code point order."""
    return "".join(sorted({c for c in text if ord(c) >= FIRST_CJK}))


def font_face(shown: str, also: str = "") -> str:
    """A @font-face rule for ``FAMILY`` holding the glyphs of the CJK characters in ``shown``
    (what the page shows) and, when there are any, in ``also`` (what its script may show);
    "" when ``shown`` has none, or when the packaged font or fontTools is missing (the page
    then draws with the fonts installed)."""
    chars = needed(shown)
    if not chars:
        return ""
    data = _subset(needed(chars + also))
    if not data:
        return ""
    url = "data:font/otf;base64," + base64.b64encode(data).decode("ascii")
    local = ", ".join(f'local("{name}")' for name in INSTALLED)
    return (
        f'@font-face{{font-family:"{FAMILY}";unicode-range:{RANGE};'
        f'src:{local}, url({url}) format("opentype")}}\n'
    )


@functools.lru_cache(maxsize=16)
def _subset(chars: str) -> bytes:
    """The packaged font cut to ``chars`` (OpenType/CFF bytes), or b"" if it cannot be."""
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError:
        return b""
    path = resources.files("attnlab") / "viz" / "assets" / "attnlab-cjk-sans.otf"
    if not path.is_file():
        return b""
    font = TTFont(io.BytesIO(path.read_bytes()))
    options = subset.Options()
    options.layout_features = []  # plain glyphs: no vertical forms or alternates
    options.hinting = False
    cutter = subset.Subsetter(options)
    cutter.populate(text=chars)
    cutter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


__all__ = ["FAMILY", "font_face", "needed"]
