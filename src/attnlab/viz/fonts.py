"""CJK-capable fonts for plot labels (床前明月光, 注意).

matplotlib's default font has no CJK glyphs and draws empty boxes for them. ``use_cjk_font``
looks for an installed CJK font (Debian: ``fonts-noto-cjk``) and puts it first in the sans-serif
list; when there is none it warns once, with the install hint, and never fails silently.
"""

from __future__ import annotations

import functools
import re
import warnings

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
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
    "no CJK font found, so CJK labels would draw as empty boxes; install one, e.g. "
    "'apt-get install fonts-noto-cjk' (Debian/Ubuntu) or 'brew install --cask font-noto-sans-cjk'"
)


class MissingCJKFontWarning(UserWarning):
    """No installed font can draw CJK characters."""


def needs_cjk(*texts: object) -> bool:
    """Whether any of the texts (strings or iterables of strings) contains a CJK character."""
    for t in texts:
        items = [t] if isinstance(t, str) else list(t or [])
        if any(CJK.search(str(s)) for s in items):
            return True
    return False


@functools.cache
def find_cjk_font() -> str | None:
    """Family name of an installed CJK font, preferring ``PREFERRED``; None when there is none."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    for name in PREFERRED:
        if name in names:
            return name
    for name in sorted(names):
        if "CJK" in name or "Hei" in name or "Gothic" in name:
            return name
    return None


_warned = False


def use_cjk_font() -> str | None:
    """Make matplotlib draw CJK text; return the font used, or warn once and return None."""
    global _warned
    import matplotlib

    font = find_cjk_font()
    if font is None:
        if not _warned:
            warnings.warn(INSTALL_HINT, MissingCJKFontWarning, stacklevel=2)
            _warned = True
        return None
    family = list(matplotlib.rcParams["font.sans-serif"])
    if family[:1] != [font]:
        matplotlib.rcParams["font.sans-serif"] = [font, *[f for f in family if f != font]]
    matplotlib.rcParams["font.family"] = "sans-serif"
    return font
