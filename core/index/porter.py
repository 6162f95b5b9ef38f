"""Whoosh's Porter stemmer (`whoosh.lang.porter.stem`), asking each step's expression only where it can match.

Every English word a vault holds for the first time in a process is stemmed (both processes of a
parallel build stem their own words). Whoosh's steps 1b and 2-5 are expressions of the form
`^(.+?)(ending|...)$`, which the regular expression engine tries from every position of the word:
~2.5 us a word. Each can match only a word ending in one of its endings, so each is asked only
then (`str.endswith` with the endings read from Whoosh's own expressions), and a word ending in
none of any step's endings is its own stem. Otherwise the steps are Whoosh's, in its order, with
its expressions; `tests/core/index/test_analysis.py` holds the two equal on every shared vault's words.
"""

from __future__ import annotations

from whoosh.lang import porter as _w


def _endings(pattern: str) -> tuple[str, ...]:
    """The alternatives of the expression's last group: `^(.+?)(a|b|c)$` -> ("a", "b", "c")."""
    return tuple(pattern.rsplit("(", 1)[1].rstrip(")$").split("|"))


_STEP2 = _endings(_w._step2.pattern)
_STEP3 = _endings(_w._step3.pattern)
_STEP4 = _endings(_w._step4_1.pattern)
_ED_ING = _endings(_w._ed_ing.pattern)
#: Every ending some step acts on (1a "s", 1b "eed", 1c "y", 4's "ion", 5's "e", the final "ll").
ENDINGS = tuple(sorted({"s", "eed", "y", "ion", "e", "ll", *_ED_ING, *_STEP2, *_STEP3, *_STEP4}))
_mgr0, _mgr1, _meq1, _s_v, _c_v = _w._mgr0, _w._mgr1, _w._meq1, _w._s_v, _w._c_v


def porter(w: str) -> str:
    """`whoosh.lang.porter.stem(w)`."""
    if len(w) < 3 or not w.endswith(ENDINGS):
        return w
    first_is_y = w[0] == "y"
    if first_is_y:
        w = "Y" + w[1:]
    w = _steps_4_5(_steps_1c_2_3(_step_1ab(w)))
    return "y" + w[1:] if first_is_y else w


def _step_1ab(w: str) -> str:
    if w.endswith("s"):
        if w.endswith("sses") or w.endswith("ies"):
            w = w[:-2]
        elif w[-2] != "s":
            w = w[:-1]
    if w.endswith("eed"):
        if _mgr0.match(w[:-3]):
            w = w[:-1]
    elif w.endswith(_ED_ING) and (m := _w._ed_ing.match(w)):
        stem = m.group(1)
        if _s_v.match(stem):
            w = stem
            if _w._at_bl_iz.match(w):
                w += "e"
            elif _w._step1b.match(w):
                w = w[:-1]
            elif _c_v.match(w):
                w += "e"
    return w


def _steps_1c_2_3(w: str) -> str:
    if w.endswith("y") and _s_v.match(w[:-1]):
        w = w[:-1] + "i"
    if w.endswith(_STEP2) and (m := _w._step2.match(w)) and _mgr0.match(m.group(1)):
        w = m.group(1) + _w._step2list[m.group(2)]
    if w.endswith(_STEP3) and (m := _w._step3.match(w)) and _mgr0.match(m.group(1)):
        w = m.group(1) + _w._step3list[m.group(2)]
    return w


def _steps_4_5(w: str) -> str:
    m = _w._step4_1.match(w) if w.endswith(_STEP4) else None
    if m:
        if _mgr1.match(m.group(1)):
            w = m.group(1)
    elif w.endswith("ion") and (m := _w._step4_2.match(w)):
        stem = m.group(1) + m.group(2)
        if _mgr1.match(stem):
            w = stem
    if w.endswith("e") and (m := _w._step5.match(w)):
        stem = m.group(1)
        if _mgr1.match(stem) or (_meq1.match(stem) and not _c_v.match(stem)):
            w = stem
    if w.endswith("ll") and _mgr1.match(w):
        w = w[:-1]
    return w
