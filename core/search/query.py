"""Parse the query box's language: words, "quoted phrases" and `key:value` filters.

Parsing is forgiving: a filter that cannot be understood becomes a warning,
never an exception, because this runs on every keystroke in the app.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.base.errors import UsageError
from core.base.models import ParsedQuery, SearchFilters
from core.base.structured import Op, PropertyFilter
from core.index.property_terms import TASK_KEY
from core.search.property_query import PROPERTY_TOKEN, property_filter

# A query is what a person types or pastes: a paragraph at most. Past that, search time grows
# with every term (5,000 words took 18 s in #22) and nothing useful comes of it.
MAX_QUERY_CHARS = 2_000
MAX_QUERY_TERMS = 200
OUTSIDE_SCOPE = "is outside the scope"  # in the warning of a typed folder the scope excludes
FILTER_KEYS = ("vault", "folder", "tag", "type", "after", "before", "lang")
# Words that carry no subject: a typed question ("how do I publish my vault") must match and
# highlight "publish" and "vault", not "my" and "do". Whoosh's own stop list (used when indexing)
# is much shorter. Quoted phrases keep every word, and a query made only of these words keeps them
# all, so a look-up of "the who" or "it" still searches.
STOP_WORDS = frozenset(
    """
    a an the and or but if so than then as of to in on at by for with from into about
    i i'm i've i'd i'll me my mine myself we our ours us you your yours he him his she her hers
    it it's its they them their theirs this that these those there here
    am is are was were be been being do does did doing done have has had having
    can could would should shall will may might must
    how what when where which who whom whose why
    want wants need needs
    """.split()
)
# The first two (non-capturing) forms keep `-key:"a b"` and `key>="a b"` whole; `_property_token` reads them.
_TOKEN = re.compile(
    r'-[^\W\d][\w\-]*(?:>=|<=|!=|>|<|=|:)"[^"]*"|[^\W\d][\w\-]*(?:>=|<=|!=|>|<|=)"[^"]*"'
    r'|(\w+):"([^"]*)"|(\w+):(\S+)|"([^"]*)"?|(\S+)',
    re.UNICODE,
)
_PROPERTY = re.compile(PROPERTY_TOKEN, re.UNICODE)


@dataclass(frozen=True, slots=True)
class QueryParse:
    """A parsed query and what the parser has to tell the user about it."""

    query: ParsedQuery
    warnings: tuple[str, ...]


class QueryTooLongError(UsageError):
    """A query over the size budget; the message says the limit and what to do."""


class QueryNotTextError(UsageError):
    """A query holding lone surrogates: bytes that were not UTF-8 (argv) or a broken `\\udcxx` escape (JSON)."""


def check_query_size(text: str) -> None:
    """Refuse a query over the budget, or one that is not text, with a clear message.

    Over the budget it would search for minutes; with lone surrogates it could not be encoded
    for the index and would end in a traceback.

    Raises:
        QueryTooLongError: longer than `MAX_QUERY_CHARS` characters or `MAX_QUERY_TERMS` words.
        QueryNotTextError: it holds a lone surrogate.
    """
    bad = next((ch for ch in text if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise QueryNotTextError(f"The query is not valid UTF-8 text (it holds U+{ord(bad):04X}); check the terminal's encoding.")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLongError(
            f"The query is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}. Search for its key words instead."
        )
    terms = len(text.split())
    if terms > MAX_QUERY_TERMS:
        raise QueryTooLongError(f"The query has {terms:,} words; the limit is {MAX_QUERY_TERMS:,}. Search for its key words instead.")


def _under(path: str, folder: str) -> bool:
    path, folder = path.strip("/").lower(), folder.strip("/").lower()
    return path == folder or path.startswith(folder + "/")


def narrow_folders(scope: tuple[str, ...], typed: tuple[str, ...]) -> tuple[str, ...] | None:
    """The folders searched when `folder:` is typed within a scope (the app's tree, `--folder`).

    A scope is a hard constraint: a typed folder inside it narrows the search to that folder,
    one around it leaves the scope as it is, and one outside it matches nothing (None) rather
    than widening the search to "either folder".
    """
    if not scope or not typed:
        return scope or typed
    inside = [t for t in typed if any(_under(t, s) for s in scope)]
    around = [s for s in scope if any(_under(s, t) for t in typed)]
    kept = tuple(dict.fromkeys(inside + around))
    return kept or None


def _narrowed(scope: tuple[str, ...], typed: tuple[str, ...], warnings: list[str]) -> tuple[str, ...] | None:
    """`narrow_folders`, with the warning a person reads when the typed folder lies outside the scope."""
    kept = narrow_folders(scope, typed)
    if kept is None:
        warnings.append(f"folder:{', '.join(typed)} {OUTSIDE_SCOPE} {', '.join(scope)}: no notes match")
    return kept


def parse_query(text: str, base: SearchFilters = SearchFilters()) -> QueryParse:
    """Split `text` into free words, phrases and filters merged over `base` filters."""
    words: list[str] = []
    phrases: list[str] = []
    warnings: list[str] = []
    vaults = list(base.vaults)
    folders: list[str] = []  # typed ones; they narrow `base.folders`, never widen them
    tags = list(base.tags)
    types = list(base.doc_types)
    langs = list(base.languages)
    after, before = base.after, base.before
    where = list(base.where)
    for m in (m for m in _TOKEN.finditer(text) if not _property_token(m.group(0), where, warnings)):
        key = (m.group(1) or m.group(3) or "").lower()
        value = m.group(2) if m.group(1) else m.group(4)
        if key and key in FILTER_KEYS and value:
            if key == "vault":
                vaults.append(value)
            elif key == "folder":
                folders.append(value.strip("/"))
            elif key == "tag":
                tags.append(value.lstrip("#").lower())
            elif key == "type":
                types.append(value.lower())
            elif key == "lang":
                langs.append(value.lower())
            else:
                day = parse_date(value)
                if day is None:
                    warnings.append(f"{key}:{value} is not a date (use YYYY-MM-DD); filter ignored")
                elif key == "after":
                    after = day
                else:
                    before = day
            continue
        if m.group(5) is not None:
            phrase = m.group(5).strip()
            if phrase:
                phrases.append(phrase)
            continue
        words.append(m.group(0))
    narrowed = _narrowed(base.folders, tuple(dict.fromkeys(folders)), warnings)
    filters = replace(
        base,
        vaults=tuple(dict.fromkeys(vaults)),
        folders=narrowed or base.folders,
        paths=frozenset() if narrowed is None else base.paths,
        tags=tuple(dict.fromkeys(tags)),
        doc_types=tuple(dict.fromkeys(types)),
        languages=tuple(dict.fromkeys(langs)),
        where=tuple(dict.fromkeys(where)),
        after=after,
        before=before,
    )
    free = " ".join(words + phrases)
    return QueryParse(ParsedQuery(free, tuple(words), tuple(phrases), filters), tuple(warnings))


def unknown_keys_as_words(result: QueryParse, base: SearchFilters, known: Callable[[str], bool]) -> QueryParse:
    """`error:404` typed in the box is a property filter only where some note has an `error`
    property; otherwise its words are searched (said in a warning). Comparisons (`rating>=4`),
    negations and `--where` conditions are meant as filters and stay filters."""
    typed = result.query.filters.where[len(base.where) :]
    dropped = [f for f in typed if f.op is Op.EQ and not f.negate and f.key != TASK_KEY and not known(f.key)]
    if not dropped:
        return result
    words = tuple(f"{f.key}:{f.value}" for f in dropped)
    kept = tuple(f for f in result.query.filters.where if f not in dropped)
    q = result.query
    query = replace(q, text=" ".join([q.text, *words]).strip(), terms=q.terms + words, filters=replace(q.filters, where=kept))
    notes = tuple(f"no note has a property {f.key!r}; {f.key}:{f.value} searched as words" for f in dropped)
    return QueryParse(query, result.warnings + notes)


def _property_token(token: str, where: list[PropertyFilter], warnings: list[str]) -> bool:
    """Take `token` as a property filter (`status:draft`, `-status:done`, `rating>=4`, `has:x`)
    when it is one; the filters Cairn had before (`tag:`, `folder:`...) keep their meaning."""
    m = _PROPERTY.fullmatch(token)
    if m is None:
        return False
    negate, key, op, quoted, plain = m.groups()
    value = quoted if quoted is not None else plain
    if op == ":" and not negate and key.lower() in FILTER_KEYS:
        return False
    if op == ":" and value.startswith("//"):
        return False  # a URL (https://...) is words, not a filter
    if negate and key.lower() in FILTER_KEYS and key.lower() != "tag":
        warnings.append(f"-{key}: cannot be negated; filter ignored")
        return True
    flt, warning = property_filter(negate, key, op, value)
    if flt is not None:
        where.append(flt)
    if warning:
        warnings.append(warning)
    return True


def content_terms(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The query words that say what the query is about (stop-words and question words dropped).

    When every word is a stop-word the words are kept, so such a query still matches something.
    """
    kept = tuple(t for t in terms if t.lower().strip("?!.,;:") not in STOP_WORDS)
    return kept or terms


def parse_date(value: str) -> str | None:
    for fmt in ("%Y-%m-%d", "%Y/%m/%d", "%Y-%m", "%Y"):
        try:
            return dt.datetime.strptime(value, fmt).date().isoformat()
        except ValueError:
            continue
    return None


