"""CJK-capable fonts for plot labels (床前明月光, 注意).

matplotlib's default font has no CJK glyphs and draws empty boxes for them. attnlab ships its
own: "attnlab CJK Sans", a subset of Noto Sans CJK SC (SIL Open Font License 1.1; see
``assets/OFL.txt`` and ``tools/make_cjk_font.py``) with every ideograph of GB2312, Big5 and JIS
X 0208. ``use_cjk_font`` puts a full installed CJK font first when there is one (it covers rarer
characters), then the packaged one, then matplotlib's default, so each glyph comes from the
first font that has it. Only a broken install (the packaged file missing) warns.
"""

from __future__ import annotations

import functools
import re
import warnings
from importlib import resources
from pathlib import Path

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
PACKAGED = "attnlab CJK Sans"
PREFERRED = (
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Noto Serif CJK JP",
    "Source Han Sans",
    "IPAexGothic",
    "IPAGothic",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
)
INSTALL_HINT = (
    "attnlab's packaged CJK font is missing (a broken install?) and no CJK font is installed, "
    "so CJK labels would draw as empty boxes; reinstall attnlab, or install one, e.g. "
    "'apt-get install fonts-noto-cjk' (Debian/Ubuntu)"
)


class MissingCJKFontWarning(UserWarning):
    """No font can draw CJK characters."""


def needs_cjk(*texts: object) -> bool:
    """Whether any of the texts (strings or iterables of strings) contains a CJK character."""
    for t in texts:
        items = [t] if isinstance(t, str) else list(t or [])
        if any(CJK.search(str(s)) for s in items):
            return True
    return False


def packaged_font_path() -> Path:
    """The packaged subset font file (package data, so it is there in an installed wheel)."""
    return Path(str(resources.files("attnlab.viz") / "assets" / "attnlab-cjk-sans.otf"))


@functools.cache
def register_packaged_font() -> str | None:
    """Make the packaged font known to matplotlib; its family name, or None if it is missing."""
    from matplotlib import font_manager

    path = packaged_font_path()
    if not path.is_file():
        return None
    font_manager.fontManager.addfont(str(path))
    return PACKAGED


@functools.cache
def find_cjk_font() -> str | None:
    """Family name of an installed full CJK font, preferring ``PREFERRED``; None if none."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist} - {PACKAGED}
    for name in PREFERRED:
        if name in names:
            return name
    for name in sorted(names):
        if "CJK" in name or "Hei" in name or "Gothic" in name:
            return name
    return None


_warned = False


def use_cjk_font() -> str | None:
    """Make matplotlib draw CJK text; return the first CJK font in use (or warn once, None)."""
    global _warned
    import matplotlib

    chain = [f for f in (find_cjk_font(), register_packaged_font()) if f is not None]
    if not chain:
        if not _warned:
            warnings.warn(INSTALL_HINT, MissingCJKFontWarning, stacklevel=2)
            _warned = True
        return None
    family = list(matplotlib.rcParams["font.sans-serif"])
    if family[: len(chain)] != chain:
        matplotlib.rcParams["font.sans-serif"] = [*chain, *[f for f in family if f not in chain]]
    # concrete names, not the generic "sans-serif": only a list of families falls back per glyph
    matplotlib.rcParams["font.family"] = [*chain, "DejaVu Sans"]
    return chain[0]
