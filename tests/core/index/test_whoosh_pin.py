"""Whoosh's private parts are reached in one module, and only on the release they were written for."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.index.whoosh_pin import PINNED, WhooshVersionError, check_version

REPO = Path(__file__).resolve().parents[3]
#: Whoosh modules whose contents are the storage layer's internals, not its public API.
PRIVATE = tuple(
    f"whoosh.{name}" for name in ("codec", "compat", "filedb", "util", "writing", "reading", "columns", "system", "formats")
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_whoosh_internals_are_imported_in_one_module_only() -> None:
    users = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "core").rglob("*.py")
        if any(name == p or name.startswith(p + ".") for name in _imports(path) for p in PRIVATE)
    }
    assert users == {"core/index/whoosh_pin.py"}


def test_the_pinned_release_passes_and_any_other_is_refused_by_name() -> None:
    check_version(PINNED)
    for other in ((2, 7, 4), (2, 8, 0), None, "2.7.5"):
        with pytest.raises(WhooshVersionError, match=r"whoosh-reloaded==2\.7\.5"):
            check_version(other)


def test_another_whoosh_fails_at_import_with_the_version_it_needs() -> None:
    code = "import whoosh; whoosh.__version__ = (2, 7, 4); import core.index.keyword_index"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode != 0
    assert "WhooshVersionError" in done.stderr and "whoosh-reloaded==2.7.5" in done.stderr and "2.7.4 is installed" in done.stderr


LEAN = """
import sys
import core.index.keyword_index, core.search.search
left_out = [m for m in ("urllib.request", "http.client", "asyncio", "cached_property", "html") if m in sys.modules]
import whoosh.compat, whoosh.reading
import urllib.request
import html
escaped = [whoosh.compat.htmlescape(t, quote=q) == html.escape(t, quote=q) for t in ('<a href="x">& it' + chr(39) + 's', "plain") for q in (True, False)]
print(left_out, urllib.request.urlopen.__module__, whoosh.compat.urlretrieve.__module__,
      type(whoosh.reading.SegmentReader.__dict__["deleted_docs_set"]).__name__, all(escaped), html.__spec__ is not None)
"""


def test_whoosh_is_imported_without_the_network_and_asyncio_modules_it_never_uses() -> None:
    done = subprocess.run([sys.executable, "-c", LEAN], capture_output=True, text=True, cwd=REPO, timeout=60, check=True)
    left_out, real, helper, cached, escaped, real_html = done.stdout.split(" ")[-6:]
    assert done.stdout.startswith("[]")  # none of them imported by a search's modules
    assert escaped == "True" and real_html.strip() == "True"  # Whoosh's `htmlescape` is html.escape; `import html` the real one
    assert real == "urllib.request" and helper == "core.index.whoosh_pin"  # later imports get the real module
    assert cached == "cached_property"  # functools' version: caches in the reader's __dict__ the same way


MORPH = """
import sys
import core.index.keyword_index, core.search.search
from core.index.whoosh_pin import lean_query
lean_query()  # what a search does before its first query (a cold `cairn index` imports no query package)
compiled = "whoosh.lang.morph_en" in sys.modules
from whoosh.query import Variations
from whoosh.query.terms import variations
got = sorted(variations("render"))
from whoosh.lang.morph_en import variations as real
print(compiled, got == sorted(real("render")), "rendering" in got)
"""


def test_english_word_forms_are_compiled_only_when_a_variations_query_asks() -> None:
    done = subprocess.run([sys.executable, "-c", MORPH], capture_output=True, text=True, cwd=REPO, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True", "True"]


def test_a_deleted_note_stays_out_of_results_with_the_stand_in_cached_property(tmp_path: Path) -> None:
    from whoosh.reading import SegmentReader

    from core.base.models import chunk_id
    from core.index.keyword_index import KeywordIndex
    from core.search.query import parse_query
    from core.vault.notes import parse_note

    ki = KeywordIndex(tmp_path / "whoosh")
    try:
        ki.apply([], [parse_note("v", n, f"walrus {n}\n".encode(), size=1, mtime_ns=1) for n in ("a.md", "b.md")])
        ki.apply(["a.md"], [])  # a deletion in the segment: Whoosh's deleted_docs_set masks it
        q = parse_query("walrus").query
        assert [h.chunk_id for h in ki.search(q, q.filters, 10)] == [chunk_id("v", "b.md", 0)]
        with ki.reading() as searcher:
            leaf = searcher.reader().leaf_readers()[0][0]
            assert isinstance(leaf, SegmentReader) and leaf.deleted_docs_set == leaf.__dict__["deleted_docs_set"]
    finally:
        ki.close()


@pytest.mark.parametrize("write_offsets", [False, True])
def test_a_columns_offsets_are_whooshs_own_summed_faster(write_offsets: bool) -> None:
    """The stored fields' column keeps no offsets: Whoosh summed them one Python call per document."""
    from io import BytesIO

    from whoosh import columns
    from whoosh.filedb.structfile import StructFile

    from core.index import whoosh_pin

    values = [b"", b"a", b"bcd" * 50, b"", b"x" * 70000, b"ef"] * 40
    out = BytesIO()
    writer = columns.VarBytesColumn(allow_offsets=True, write_offsets_cutoff=0 if write_offsets else 10**9).writer(StructFile(out))
    for docnum, value in enumerate(values):
        writer.add(docnum, value)
    writer.finish(len(values))
    data = out.getvalue()
    ours = columns.VarBytesColumn().reader(StructFile(BytesIO(data)), 0, len(data), len(values))
    whooshs = object.__new__(columns.VarBytesColumn.Reader)  # the same reader, filled by Whoosh's own method
    whooshs._dbfile, whooshs._basepos, whooshs._length, whooshs._doccount = StructFile(BytesIO(data)), 0, len(data), len(values)
    whooshs.had_stored_offsets = False
    whoosh_pin.WHOOSH_READ_OFFSETS(whooshs)
    assert ours.had_stored_offsets == whooshs.had_stored_offsets == write_offsets
    assert list(ours._offsets) == list(whooshs._offsets) and list(ours._lengths) == list(whooshs._lengths)
    assert [ours[n] for n in range(len(values))] == values


DIGESTS = """
import hashlib, json, sys
from whoosh.filedb import filetables
from whoosh.fields import NUMERIC
import whoosh.fields
keys = [b"", b"a", "caf\u00e9".encode(), bytes(range(256)) * 3]
same = [filetables.md5_hash(k) == int(hashlib.md5(k).hexdigest(), 16) & 0xFFFFFFFF for k in keys]
from decimal import Decimal
field = NUMERIC(int, decimal_places=2, stored=True)
import datetime
from whoosh.fields import DATETIME
from whoosh.util.times import datetime_to_long
when = datetime.datetime(2026, 11, 27, 18, 30)
dated = [DATETIME().to_column_value(when) == datetime_to_long(when), DATETIME().from_bytes(DATETIME().to_bytes(when)) == when]
print(json.dumps([LOADED, filetables.md5.__module__, same, field.to_bytes(Decimal("1.25")) == NUMERIC(int).to_bytes(125), dated]))
"""
PRELUDE = """
import sys
import core.index.keyword_index
LOADED = sorted(m for m in ("hashlib", "_hashlib", "decimal", "_decimal", "whoosh.util.times", "calendar", "locale") if m in sys.modules)
"""


def test_whoosh_hashes_with_cpythons_own_md5_and_loads_decimals_and_dates_only_when_used() -> None:
    """Whoosh's term table keys hash as with hashlib's MD5, without OpenSSL; `decimal`, and the date
    conversions with `calendar` and `locale`, are not loaded for NUMERIC and DATETIME fields Cairn never
    declares, and such fields still file a Decimal and a datetime as Whoosh's own code does."""
    done = subprocess.run([sys.executable, "-c", PRELUDE + DIGESTS], capture_output=True, text=True, cwd=REPO, timeout=60, check=True)
    loaded, md5_module, same, decimal_filed, dated = json.loads(done.stdout)
    assert loaded == []
    assert md5_module == "_md5" and same == [True] * 4 and decimal_filed is True and dated == [True, True]


def test_cairns_schema_declares_no_field_that_would_make_a_decimal() -> None:
    """`whoosh.fields` sees a `Decimal` stand-in (`core.base.lean_import.class_once_loaded`), which differs only
    in an identity test: `NUMERIC(Decimal)`, a type Cairn's schema must not use."""
    from whoosh.fields import NUMERIC

    from core.index.keyword_schema import build_schema

    numeric = [field for _, field in build_schema().items() if isinstance(field, NUMERIC)]
    assert numeric and all(field.numtype in (int, float) and field.decimal_places == 0 for field in numeric)
