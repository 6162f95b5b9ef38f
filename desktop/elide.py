"""Shortening "heading › path" lines so they stay readable when the column is narrow.

Qt's middle elision cut such lines mid-word ("Updating…ncing.md"). Here the path
gives way first, one middle folder at a time ("Docs/…/Sync/Updating.md"), then the
heading trail loses words from its end, and the file name is kept whole as long
as anything fits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

ELLIPSIS = "…"
SEP = "  ·  "


def shorter_paths(path: str) -> Iterator[str]:
    """The path, then with middle folders dropped one by one, then the file name alone."""
    *folders, name = path.split("/")
    yield path
    for keep in range(len(folders) - 1, 0, -1):  # the first folder, "…", the last few
        tail = folders[len(folders) - keep + 1 :] if keep > 1 else []
        yield "/".join([folders[0], ELLIPSIS, *tail, name])
    if folders:
        yield f"{ELLIPSIS}/{name}"
        yield name


def elide_where(trail: str, path: str, width: int, measure: Callable[[str], int]) -> str:
    """`trail · path` fitted into `width` (as `measure` counts it), shortened at folder and word bounds."""
    def joined(t: str, p: str) -> str:
        return f"{t}{SEP}{p}" if t else p

    for p in shorter_paths(path):
        if measure(joined(trail, p)) <= width:
            return joined(trail, p)
    name = path.rsplit("/", 1)[-1]
    words = trail.split()
    while words:
        words.pop()
        short = f"{' '.join(words).rstrip(' ›')}{ELLIPSIS}" if words else ""  # never end on a dangling "›"
        if short and measure(joined(short, name)) <= width:
            return joined(short, name)
    text = name
    while len(text) > 1 and measure(text + ELLIPSIS) > width:  # only the name is left: cut at its end
        text = text[:-1]
    return text if text == name else text + ELLIPSIS
