"""What a vault's `.obsidian` folder says about its notes: property types and daily notes.

Read-only, and forgiving: a missing or damaged file means Obsidian's defaults (types
inferred from values, daily notes named `YYYY-MM-DD`). Read once per vault and again only
when one of the two files changes (its size and mtime are the cache key).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from core.base.structured import PropertyType

DEFAULT_DAILY_FORMAT = "YYYY-MM-DD"
# Moment.js tokens Obsidian's daily-note formats use, longest first, as strptime directives.
_MOMENT = (
    ("YYYY", "%Y"),
    ("YY", "%y"),
    ("MMMM", "%B"),
    ("MMM", "%b"),
    ("MM", "%m"),
    ("M", "%m"),
    ("DDDD", "%j"),
    ("DD", "%d"),
    ("D", "%d"),
    ("dddd", "%A"),
    ("ddd", "%a"),
)
_TOKEN = re.compile(r"\[([^\]]*)\]|" + "|".join(t for t, _ in _MOMENT) + r"|.", re.DOTALL)
_FOUR_DIGITS = re.compile(r"\d{4}")  # a year: what every daily note's name holds
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # what `date.fromisoformat` reads as `strptime("%Y-%m-%d")` does
_MAYBE_DAY = re.compile(r"\d{4}-\d{1,2}-(?:\d{1,2}| \d)")  # all `strptime("%Y-%m-%d")` may read (its %Y, %m, %d)


@dataclass(frozen=True, slots=True)
class VaultSettings:
    """The vault's declared property types and daily-note naming."""

    types: dict[str, PropertyType] = field(default_factory=dict)
    daily_format: str = DEFAULT_DAILY_FORMAT
    daily_folder: str = ""
    problems: tuple[str, ...] = ()

    def daily_date(self, rel_path: str) -> str | None:
        """The date a daily note's file name says (ISO), or None for any other note."""
        folder = self.daily_folder.strip("/")
        if folder and not rel_path.startswith(folder + "/"):
            return None
        # A date needs a four-digit year (%Y is required below): most names have none, and
        # a failed strptime per note was ~3 % of a cold index of tldr's pages.
        if not _FOUR_DIGITS.search(rel_path.rpartition("/")[2]):
            return None
        # "YYYY/MM/YYYY-MM-DD" files notes in dated folders: the name itself carries the date.
        pattern = strptime_format(self.daily_format.rsplit("/", 1)[-1])
        if pattern is None:
            return None
        stem = PurePosixPath(rel_path).stem
        default = pattern == "%Y-%m-%d"  # strptime's answers below, without its module for the usual names
        if default and not _MAYBE_DAY.fullmatch(stem):
            return None  # none that strptime reads: "limit 2000", "2026 plans"
        try:
            if default and _ISO_DAY.fullmatch(stem):
                return dt.date.fromisoformat(stem).isoformat()
            return dt.datetime.strptime(stem, pattern).date().isoformat()
        except ValueError:
            return None


@functools.lru_cache(maxsize=16)
def strptime_format(moment: str) -> str | None:
    """A moment.js date format as a `strptime` format; None when it has no year, month and day."""
    out: list[str] = []
    table = dict(_MOMENT)
    for m in _TOKEN.finditer(moment):
        if m.group(1) is not None:
            out.append(m.group(1).replace("%", "%%"))
        else:
            token = m.group(0)
            out.append(table.get(token, token.replace("%", "%%")))
    spelled = "".join(out)
    has_day = "%d" in spelled or "%j" in spelled
    return spelled if "%Y" in spelled and has_day else None


SETTINGS_RECHECK_S = 2.0  # how stale a vault's settings may be while its notes are parsed in bulk


def load_settings(root: str | Path) -> VaultSettings:
    """The vault's settings (cached until `types.json` or `daily-notes.json` changes)."""
    base = Path(root) / ".obsidian"
    return _load(str(base), _stamp(base / "types.json"), _stamp(base / "daily-notes.json"))


def settings_for_note(path: str | Path, rel_path: str) -> VaultSettings:
    """The settings of the vault holding the note at `path` (its root found from `rel_path`)."""
    depth = len(PurePosixPath(rel_path).parts)
    return load_settings(Path(path).parents[depth - 1] if depth else Path(path))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _load(base: str, _types_stamp: tuple[int, int], _daily_stamp: tuple[int, int]) -> VaultSettings:
    problems: list[str] = []
    types: dict[str, PropertyType] = {}
    raw_types = _read_json(Path(base, "types.json"), problems)
    declared = raw_types.get("types", {}) if isinstance(raw_types, dict) else {}
    for key, name in (declared.items() if isinstance(declared, dict) else ()):
        kind = PropertyType.parse(str(name))
        if kind is None:
            problems.append(f".obsidian/types.json: property {key!r} has unknown type {name!r}; inferred from values")
            continue
        types[str(key).strip().lower()] = kind
    daily = _read_json(Path(base, "daily-notes.json"), problems)
    daily = daily if isinstance(daily, dict) else {}
    fmt = str(daily.get("format") or DEFAULT_DAILY_FORMAT)
    if strptime_format(fmt) is None:
        problems.append(f".obsidian/daily-notes.json: format {fmt!r} has no year, month and day; {DEFAULT_DAILY_FORMAT} used")
        fmt = DEFAULT_DAILY_FORMAT
    return VaultSettings(types, fmt, str(daily.get("folder") or ""), tuple(problems))


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        problems.append(f".obsidian/{path.name} could not be read ({type(exc).__name__}); defaults used")
        return {}
