"""YAML front matter: the properties a note declares about itself.

Broken YAML never stops a note from being indexed; the problem is returned
so the index health view can show it.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.base.confidentiality import Confidentiality
from core.base.models import FrontMatter
from core.base.structured import PropertyType
from core.vault.frontmatter_simple import NOT_SIMPLE, load_simple
from core.vault.properties import read_properties

if TYPE_CHECKING:  # PyYAML loads with the first front matter: a keyword search never reads any
    import yaml

_FENCE = re.compile(rb"\A---[ \t]*\r?\n")
_CLOSE = re.compile(rb"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_TAG_CLEAN = re.compile(r"[^\w/\-]+", re.UNICODE)


def split_front_matter(raw: bytes, offset: int = 0) -> tuple[str | None, int]:
    """Find the YAML block at `offset` (after a BOM). Returns (yaml_text, body_start_byte)."""
    head = raw[offset:]
    opening = _FENCE.match(head)
    if not opening:
        return None, offset
    closing = _CLOSE.search(head, opening.end())
    if not closing:
        return None, offset
    yaml_text = head[opening.end() : closing.start()].decode("utf-8", "replace")
    end = closing.end()
    if head[end : end + 1] == b"\n":
        end += 1
    return yaml_text, offset + end


def parse_front_matter(raw: bytes, offset: int = 0, types: Mapping[str, PropertyType] | None = None) -> FrontMatter:
    """Parse the front matter block: the keys Cairn uses itself, and every property typed
    (`types`: the vault's declared property types). Bad values are reported, never fatal."""
    yaml_text, body_start = split_front_matter(raw, offset)
    if yaml_text is None:
        return FrontMatter(end_byte=offset)
    data = load_simple(yaml_text)
    if data is NOT_SIMPLE:
        data = _load_with_libyaml(yaml_text)
    if data is _NOT_LOADED:
        data = _load_with_pyyaml(yaml_text)
        if isinstance(data, _Unreadable):
            return FrontMatter(end_byte=body_start, error=data.error)
    if data is None:
        return FrontMatter(end_byte=body_start)
    if not isinstance(data, dict):
        return FrontMatter(end_byte=body_start, error="front matter is not a mapping of keys to values")
    typed = read_properties(data, types)
    data = {key: _flat(value) for key, value in data.items() if key in _KNOWN_KEYS}
    errors: list[str] = list(typed.problems)
    level = data.get("confidentiality")
    confidentiality = Confidentiality.parse(level)  # an unknown level fails closed: restricted
    if level not in (None, "") and str(level).strip().lower() != confidentiality:
        errors.append(f"unknown confidentiality {str(level).strip().lower()!r}; treated as 'restricted'")
    date, date_error = _parse_date(data.get("date"))
    if date_error:
        errors.append(date_error)
    return FrontMatter(
        title=_as_text(data.get("title")),
        tags=normalise_tags(data.get("tags", data.get("tag"))),
        aliases=_as_list(data.get("aliases", data.get("alias"))),
        date=date,
        project=_as_text(data.get("project")),
        doc_type=(_as_text(data.get("doc_type")) or "").lower() or None,
        confidentiality=confidentiality,
        end_byte=body_start,
        error="; ".join(errors) or None,
        properties=typed.properties,
        links=typed.links,
    )


_NOT_LOADED = object()


@dataclass(frozen=True, slots=True)
class _Unreadable:
    """Front matter PyYAML refused, and why (as the note's error says it)."""

    error: str


def _load_with_pyyaml(yaml_text: str) -> Any:
    """The front matter read by PyYAML's own parser, or `_Unreadable` with the reason.

    Only here is `yaml` imported when the simple reader took the block (~20 ms of a cold index).
    """
    import yaml

    try:
        return yaml.load(yaml_text, Loader=_loader())
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        return _Unreadable(f"front matter is not valid YAML: {first}")
    except RecursionError:
        return _Unreadable("front matter is nested too deeply to read; ignored")
    except Exception as exc:  # noqa: BLE001 - PyYAML's constructors raise more than YAMLError (ValueError, OverflowError ...)
        return _Unreadable(f"front matter could not be read ({type(exc).__name__}: {exc}); ignored")


def _load_with_libyaml(yaml_text: str) -> Any:
    """The front matter read by libyaml (~7x faster than PyYAML's own parser), or `_NOT_LOADED`.

    Only where both parsers agree: not with a tab anywhere (libyaml takes tabs PyYAML's parser
    rejects), and never for an error, which PyYAML's parser then reports as it always did.
    Compared on generated front matter in the tests: the same values wherever libyaml loads.
    """
    loader = _c_loader()
    if loader is None or "\t" in yaml_text:
        return _NOT_LOADED
    import yaml

    try:
        return yaml.load(yaml_text, Loader=loader)
    except Exception:  # noqa: BLE001 - any failure: the pure parser reads it and says why
        return _NOT_LOADED


@functools.cache
def _c_loader() -> type[yaml.SafeLoader] | None:
    """`_loader` on libyaml (PyYAML's wheels carry it), or None where it is missing."""
    import yaml

    base = getattr(yaml, "CSafeLoader", None)
    if base is None:
        return None

    class _CLoader(base):  # type: ignore[misc, valid-type]
        pass

    _CLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
    return _CLoader


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    """A SafeLoader whose dates and times never raise: `2023-02-30` or `25:61:00` stay text,
    and `_parse_date` reports them as dates it does not recognise. Built on first use so
    that importing this module does not import PyYAML."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
    return _Loader


def _timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    import yaml

    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)  # type: ignore[arg-type]
    except (ValueError, OverflowError):
        return loader.construct_scalar(node)  # type: ignore[arg-type]
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text that can be written as UTF-8: YAML escapes such as "\\ud800" make lone surrogates,
    which every later step (hashing, the index, JSON) would choke on."""
    return _SURROGATE.sub("\ufffd", text)


_KNOWN_KEYS = frozenset({"title", "tags", "tag", "aliases", "alias", "date", "project", "doc_type", "confidentiality"})


def _flat(value: Any) -> Any:
    """A scalar or a flat list of scalars. Nested values are never turned into text: YAML
    aliases can nest a few lines into billions of items (a "billion laughs" note)."""
    if isinstance(value, list):
        return [clean_text(v) if isinstance(v, str) else v for v in value if not isinstance(v, (list, dict, set))]
    if isinstance(value, (dict, set)):
        return "{...}"  # not a known confidentiality level either, so that fails closed
    return clean_text(value) if isinstance(value, str) else value


def normalise_tags(value: Any) -> tuple[str, ...]:
    """Tags as lower-case strings without '#': Obsidian treats tags case-insensitively."""
    items = _as_list(value)
    out: list[str] = []
    for item in items:
        for part in item.replace(",", " ").split():
            tag = _TAG_CLEAN.sub("", part.lstrip("#")).lower()
            if tag and tag not in out:
                out.append(tag)
    return tuple(out)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _as_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, (list, tuple, set)):
        return tuple(str(v).strip() for v in value if v is not None and str(v).strip())
    return (str(value),)


def _parse_date(value: Any) -> tuple[str | None, str | None]:
    if value is None or value == "":
        return None, None
    if isinstance(value, dt.datetime):
        return value.date().isoformat(), None
    if isinstance(value, dt.date):
        return value.isoformat(), None
    text = str(value).strip()
    for fmt in ("%Y-%m-%d", "%Y/%m/%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m"):
        try:
            return dt.datetime.strptime(text, fmt).date().isoformat(), None
        except ValueError:
            continue
    return None, f"date {text!r} is not a recognised date (use YYYY-MM-DD)"
