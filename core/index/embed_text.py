"""What the embedding model is shown for a chunk, the cache key derived from it, and which
chunks are not worth a vector at all."""

from __future__ import annotations

import re

from core.base.digest import sha256_hex

# A chunk hash with this prefix marks a chunk the vector index leaves out (see `vector_worthy`).
# The hash stays a hash of the input, so a chunk whose text changes is judged again.
NO_VECTOR = "novec:"
_LINK_LINE = re.compile(
    r"\s*(?:[-*+]|\d+[.)])?\s*(?:\[\s*[ xX]?\s*\]\s*)?"  # a list marker, a task box
    r"(?:(?:\[[^\]\n]*\]\([^)\n]*\)|<?(?:https?|ftp)://\S+?>?|\[\[[^\]\n]+\]\])[\s,;:|·•/().\d-]*)+"  # links, dates
)
_URL = re.compile(r"(?:https?|ftp)://\S+|data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]+|\]\([^)\n]*\)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{80,}={0,2}")
_WORD = re.compile(r"[^\W\d_]{2,}")
_ASCII_WORD = re.compile(r"[A-Za-z]{2,}")  # `_WORD` on ASCII text
MIN_LETTER_SHARE = 0.25  # letters in words, as a share of the chunk's visible characters
MINIFIED_LINE = 400  # a line this long with almost no spaces is minified code or a blob
MIN_SPACE_SHARE = 0.06  # prose has ~15 % spaces, code ~10-20 %, minified JavaScript ~3-5 %


def embedding_input(title: str, heading_path: str, text: str) -> str:
    """Where the chunk sits (title, headings), then the chunk, without repeating its heading line."""
    return _with_context(title, heading_path, chunk_body(heading_path, text))


def _with_context(title: str, heading_path: str, body: str) -> str:
    context = heading_path if heading_path.startswith(title) else " > ".join(p for p in (title, heading_path) if p)
    return f"{context}\n{body}" if context else body


def chunk_body(heading_path: str, text: str) -> str:
    """The chunk's text without its own heading line (the context line above says it)."""
    if not heading_path or not text.startswith("#"):
        return text  # no heading line to drop (and no copy of the text made to look for one)
    first, _, rest = text.partition("\n")
    if first.startswith("#") and heading_path and first.lstrip("#").strip() == heading_path.split(" > ")[-1]:
        return rest.lstrip("\n")
    return text


def input_hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def chunk_hash(title: str, heading_path: str, text: str) -> str:
    """The manifest's hash of a chunk: its embedding input's, marked when it gets no vector."""
    body = chunk_body(heading_path, text)  # once for both (every chunk of a first index)
    digest = input_hash(_with_context(title, heading_path, body))
    return digest if vector_worthy(body) else NO_VECTOR + digest


def vector_worthy(body: str) -> bool:
    """False for a chunk whose vector would say nothing: a pure list of links, a table of
    numbers, base64 or a data URI, minified code. It stays keyword-searchable; only the
    embedding (the slow part of indexing) is saved, and such chunks, all alike to the model,
    no longer crowd semantic results.

    A chunk with no body at all (a heading alone) keeps its vector: its title and headings
    are what it means.
    """
    lines = [line for line in body.splitlines() if line.strip()]
    if not lines:
        return True
    if all(map(_LINK_LINE.fullmatch, lines)):
        return False
    # Minified lines carry no words; base64 and URLs are neither words nor text to weigh them by
    # (a sentence around a long link keeps its vector).
    if max(map(len, lines)) < MINIFIED_LINE:
        kept = lines
    else:
        kept = [line for line in lines if len(line) < MINIFIED_LINE or line.count(" ") >= MIN_SPACE_SHARE * len(line)]
    cleaned = "\n".join(kept)
    if "://" in cleaned or "data:" in cleaned or "](" in cleaned:  # what every `_URL` match holds
        cleaned = _URL.sub(" ", cleaned)
    raw = cleaned.encode("utf-8")
    runs = raw.translate(_RUNS)
    if _RUN_80 in runs:  # base64 runs are 80+ characters without a space
        cleaned = _BASE64.sub(" ", cleaned)
        raw = cleaned.encode("utf-8")
    visible = len(cleaned) if kept is lines else sum(map(len, lines)) - sum(map(len, kept)) + len(cleaned)
    visible -= len(raw) - len(raw.translate(None, b" \t\n"))  # spaces, tabs and newlines: ASCII, one byte each
    return _letters(cleaned, raw, _RUN_40 in runs) >= max(MIN_LETTER_SHARE * max(visible, 1), 1)


# Byte maps for `vector_worthy`'s counts over a chunk's UTF-8: ASCII letters -> "a", anything else -> " "
# (`_LETTERS`); ASCII whitespace -> " ", anything else -> "x" (`_RUNS`: 40 "x" in a row may be a 40-letter
# word, 80 a base64 run; the other characters `str.split` splits at only make such runs longer, so a pass
# these gate is skipped only where it cannot match).
_LETTERS = bytes(0x61 if 0x41 <= i <= 0x5A or 0x61 <= i <= 0x7A else 0x20 for i in range(256))
_RUNS = bytes(0x20 if i in b" \t\n\r\x0b\x0c" else 0x78 for i in range(256))
_RUN_40 = b"x" * 40
_RUN_80 = b"x" * 80
_LETTERS_40 = b"a" * 40  # in `_LETTERS`' copy: a word of 40 ASCII letters or more
_ASCII = bytes(range(128))
_WORD_CHAR = re.compile(r"\w")


def _letters(text: str, raw: bytes, long_runs: bool) -> int:
    """Letters in words of 2-39 letters (longer runs are blobs, not words); `raw` is `text` in UTF-8,
    `long_runs` whether it may hold 40 characters without a space.

    Counted in bytes where every letter is ASCII (the non-ASCII characters, if any, are
    punctuation such as curly quotes and dashes: separators, as in `_WORD`): letters, less
    those standing alone, from three counts over one translated copy. This ran for every
    chunk of a first index (a regular expression substitution, ~60 % of this rule's time).
    Text with non-ASCII letters or digits takes `_WORD` itself.
    """
    if len(raw) != len(text) and _WORD_CHAR.search(raw.translate(None, _ASCII).decode("utf-8")) is not None:
        word = _WORD
        letters = len(text) - len(word.sub("", text))
    else:
        word = _ASCII_WORD
        marks = raw.translate(_LETTERS)
        runs = marks.count(b" a") + (marks[:1] == b"a")
        longer_runs = marks.count(b" aa") + (marks[:2] == b"aa")
        letters = marks.count(b"a") - (runs - longer_runs)
        long_runs = long_runs and _LETTERS_40 in marks  # a code line or URL of 40 characters is rarely one word
    if long_runs:  # a 40-letter word needs 40 characters without a space
        letters -= sum(len(w) for w in word.findall(text) if len(w) >= 40)
    return letters
