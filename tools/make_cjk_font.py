"""Build attnlab's packaged CJK font: a subset of Noto Sans CJK SC (SIL Open Font License 1.1).

attnlab draws 床前明月光 and other CJK labels on any machine, also one without a system CJK font,
by shipping this subset as package data (src/attnlab/viz/assets/). It keeps Latin, punctuation, arrows and math operators,
kana, full-width forms and every ideograph encodable in GB2312, Big5 or JIS X 0208 (18,107 of
them), without layout features or hinting: about 4.4 MB. The family is renamed "attnlab CJK Sans"
(the OFL lets derivatives be renamed; Noto CJK declares no Reserved Font Name), so it never
shadows a full Noto install. Run once, from Debian's fonts-noto-cjk:

    apt-get install fonts-noto-cjk
    python tools/make_cjk_font.py [/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

SOURCE = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
FACE = 2  # Noto Sans CJK SC in the collection
OUT = Path(__file__).resolve().parents[1] / "src/attnlab/viz/assets/attnlab-cjk-sans.otf"
FAMILY = "attnlab CJK Sans"
RANGES = [
    (0x20, 0x7F),  # ASCII
    (0xA0, 0x100),  # Latin-1
    (0x2000, 0x2070),  # general punctuation
    (0x2100, 0x2300),  # letterlike, arrows, math operators (matplotlib writes − as U+2212)
    (0x25A0, 0x2600),  # geometric shapes
    (0x3000, 0x3100),  # CJK punctuation, kana
    (0xFF00, 0xFFF0),  # full-width forms
]


def _encodable(c: str) -> bool:
    for enc in ("gb2312", "big5", "euc_jp"):
        try:
            c.encode(enc)
            return True
        except UnicodeEncodeError:
            pass
    return False


def characters() -> str:
    chars = {chr(cp) for lo, hi in RANGES for cp in range(lo, hi)}
    chars |= {chr(cp) for cp in range(0x4E00, 0xA000) if _encodable(chr(cp))}
    return "".join(sorted(chars))


def main(source: str = SOURCE) -> None:
    font = TTCollection(source).fonts[FACE]
    opts = subset.Options()
    opts.layout_features, opts.hinting, opts.name_IDs, opts.notdef_outline = [], False, ["*"], True
    sub = subset.Subsetter(opts)
    sub.populate(text=characters())
    sub.subset(font)
    names = font["name"]
    for rec in list(names.names):
        if rec.nameID in (1, 3, 4, 6, 16, 17, 18, 21, 22):
            names.removeNames(nameID=rec.nameID)
    for nid, value in ((1, FAMILY), (2, "Regular"), (4, FAMILY), (6, "attnlabCJKSans-Regular")):
        names.setName(value, nid, 3, 1, 0x409)
        names.setName(value, nid, 1, 0, 0)
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = ["attnlabCJKSans-Regular"]
        cff.topDictIndex[0].FamilyName = FAMILY
        cff.topDictIndex[0].FullName = FAMILY
    OUT.parent.mkdir(parents=True, exist_ok=True)
    font.save(OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size / 2**20:.1f} MiB, {len(characters())} characters)")


if __name__ == "__main__":
    main(*sys.argv[1:])
