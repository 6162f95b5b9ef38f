"""The fast segment writer must write exactly the index Whoosh's own writer writes."""

from __future__ import annotations

import random
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from whoosh import index as windex
from whoosh.codec.whoosh3 import W3Codec

from core.index.analysis import language
from core.index.fast_writer import FastSegmentWriter, stored_plain
from core.index.field_analysis import is_fast_text, text_items
from core.index.keyword_schema import INDEX_NAME, build_schema, document_fields
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import parse_note
from tests.fixture_notes import note_texts
from tests.index_dump import index_dump

VAULTS = next((p / "shared/data/vaults" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))
SAMPLES = [
    "tldr/pages/common/tar.md",
    "tldr/pages.de/common/tar.md",
    "tldr/pages.ja/common/tar.md",
    "tldr/pages.zh/common/tar.md",
    "tldr/pages/common/git-commit.md",
    "tldr/pages.de/common/git.md",
    "simonw-til/sql/consecutive-groups.md",
    "simonw-til/twitter/birdwatch-sqlite.md",
    "simonw-til/python/installing-upgrading-plugins-with-pipx.md",
    "simonw-til/sqlite/json-extract-path.md",
    "simonw-til/github-actions/markdown-table-of-contents.md",
]

NOTES = 16  # generated notes (tests/fixture_notes.py): English, German, Japanese and Chinese chunks


@pytest.fixture(params=["generated", "real"])
def source(request: pytest.FixtureRequest) -> str:
    """The notes a guard test writes: generated ones (always), real vault pages (where they are)."""
    if request.param == "real" and not (VAULTS / "tldr").is_dir():
        pytest.skip("the shared real vaults are not beside this checkout")
    return str(request.param)


def _docs(source: str = "generated") -> list[Any]:
    parser, links = new_parser(), new_link_parser()
    if source == "generated":
        notes = [(rel, text.encode()) for rel, text in note_texts(NOTES).items()]
    else:
        notes = [(rel, (VAULTS / rel).read_bytes()) for rel in SAMPLES if (VAULTS / rel).is_file()]
    docs = [
        parse_note("v", rel, raw, size=len(raw), mtime_ns=0, limits=ChunkLimits(1000, 2000), parser=parser, link_parser=links)
        for rel, raw in notes
    ]
    assert len(docs) >= 6, "the sample notes moved"
    return docs


def _add_all(writer: Any, docs: list[Any], fast: bool, *, per_chunk: bool = False) -> None:
    """Every chunk of `docs`, through our writer (a note at a time, or `per_chunk`, language passed)
    or Whoosh's (language set around it)."""
    for doc in docs:
        rows = document_fields(doc)
        if fast and not per_chunk:
            writer.add_note(rows, [fields["lang"] for fields in rows])
            continue
        for fields in rows:
            if fast:
                writer.add_document(**fields, _lang=fields["lang"])
            else:
                with language(fields["lang"]):
                    writer.add_document(**fields)


def _write(directory: Path, docs: list[Any], fast: bool, *, twice: bool = False, optimize: bool = False, per_chunk: bool = False) -> Any:
    ix = windex.create_in(str(directory), build_schema(), indexname=INDEX_NAME)
    rounds = [docs[: len(docs) // 2], docs[len(docs) // 2 :]] if twice else [docs]
    for batch in rounds:
        writer = FastSegmentWriter(ix, codec=W3Codec(compression=0)) if fast else ix.writer(codec=W3Codec(compression=0))
        _add_all(writer, batch, fast, per_chunk=per_chunk)
        writer.commit(merge=True, optimize=optimize)
    return ix


@pytest.mark.parametrize(
    "twice,copies,per_chunk",
    [(False, 1, False), (False, 1, True), (True, 1, False), (True, 12, False)],
    ids=["one-commit", "one-commit-per-chunk", "merged", "long-lists-merged"],
)
def test_the_fast_writer_writes_what_whoosh_writes(tmp_path: Path, twice: bool, copies: int, per_chunk: bool, source: str) -> None:
    # 12 copies: common terms get several 128-posting blocks; `per_chunk`: `add_document` a chunk at a time, not `add_note`
    docs = [replace(d, rel_path=f"c{i}/{d.rel_path}") for i in range(copies) for d in _docs(source)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    slow = index_dump(_write(tmp_path / "a", docs, fast=False, twice=twice))
    fast = index_dump(_write(tmp_path / "b", docs, fast=True, twice=twice, per_chunk=per_chunk))
    assert len(slow) > 500
    if copies > 1:
        assert max(len(v[0]) for k, v in slow.items() if not k.startswith(("doc", "lengths")) and ":" in k) > 2 * 128
    assert slow.keys() == fast.keys()
    for key in slow:
        assert fast[key] == slow[key], key


def test_a_merge_past_the_memory_limit_spills_to_whooshs_pool_and_writes_the_same_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.index.fast_writer as fast_writer

    spilled: list[int] = []
    original = FastSegmentWriter._spilling_pool

    def spy(self: FastSegmentWriter, pool: Any) -> Any:
        spilled.append(pool.count)
        return original(self, pool)

    monkeypatch.setattr(fast_writer, "POSTING_BYTES", 1024 * 1024 * 128 // 50)  # limit: 50 postings at limitmb=128
    monkeypatch.setattr(fast_writer, "segment_postings", lambda reader: None)  # a segment only Whoosh can read: pooled
    monkeypatch.setattr(FastSegmentWriter, "_spilling_pool", spy)
    docs = [replace(d, rel_path=f"c{i}/{d.rel_path}") for i in range(3) for d in _docs()]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    slow = index_dump(_write(tmp_path / "a", docs, fast=False, twice=True, optimize=True))
    fast = index_dump(_write(tmp_path / "b", docs, fast=True, twice=True, optimize=True))
    assert spilled and spilled[0] > 50  # the merge moved the postings to the spilling pool
    assert slow.keys() == fast.keys()
    for key in slow:
        assert fast[key] == slow[key], key


def test_text_items_match_the_analyzer_in_every_language() -> None:
    field = build_schema()["body"]
    assert is_fast_text(field)
    text = "The Quick brown fox, the fox! über Häuser laufen 3.14 os.path 我的猫在压缩包里 ねこ"
    for lang in ("en", "de", "ja", "fr"):
        with language(lang):
            want = list(field.index(text))
        terms, weights, values, length = text_items(text, lang, field.format.field_boost)
        assert all(type(t) is str for t in terms)  # the analyser's own terms, encoded once each at commit
        assert sorted(zip(_utf8(terms), weights, values, strict=True)) == sorted((t, w, v) for t, _, w, v in want)
        assert length == sum(freq for _, freq, _, _ in want)


def _utf8(terms: tuple[str | bytes, ...]) -> list[bytes]:
    """Terms as Whoosh writes them: a text field's (`str`, see `FieldItems`) in UTF-8, the others as they are."""
    return [t.encode("utf-8") if isinstance(t, str) else t for t in terms]


def _word_mixes() -> list[str]:
    """Texts where the positions and the order of terms are easy to get wrong: stop words first (the
    first kept token keeps its raw position), terms repeated, words the term memo has never seen, CJK."""
    rng = random.Random(30)
    stops = ["the", "and", "of", "a", "is", "die", "und", "le", "et", "x", "I"]
    common = ["fox", "Foxes", "running", "über", "Häuser", "café", "os.path", "3.14", "snake_case", "naïve", "İstanbul"]
    cjk = ["我的猫在压缩包里", "ねこ", "東京タワー", "한국어"]
    mixes = ["", "the and of", "the fox", "fox the fox", "我的猫 the fox 我的猫"]
    for _ in range(150):
        fresh = ["".join(rng.choice("bcdfgklmnprstvwz") + rng.choice("aeiouäö") for _ in range(rng.randint(1, 4))) for _ in range(3)]
        lead = rng.sample(stops, rng.randint(0, 4))
        body = [rng.choice(rng.choice([stops, common, common, fresh, cjk])) for _ in range(rng.randint(0, 60))]
        mixes.append(" ".join(lead + body))
    return mixes


@pytest.mark.parametrize("source", ["generated", "real"])
def test_text_items_give_the_analyzers_terms_in_first_seen_order(source: str) -> None:
    """Every term, weight, encoded position list and length is Whoosh's own, in the order the terms first occur."""
    if source == "real":
        if not (VAULTS / "tldr").is_dir():
            pytest.skip("the shared real vaults are not beside this checkout")
        texts = [(VAULTS / rel).read_text(encoding="utf-8") for rel in SAMPLES if (VAULTS / rel).is_file()]
        texts += [chunk for text in texts for chunk in text.split("\n\n")]
    else:
        texts = _word_mixes()
    field = build_schema()["body"]
    for lang in ("en", "de", "fr", "ja", "zh"):
        for text in texts:
            # First, while the word -> term memo (shared with the analyzer) has not seen the fresh words.
            terms, weights, values, got_length = text_items(text, lang, field.format.field_boost)
            with language(lang):
                want = {t: (w, v) for t, _, w, v in field.index(text)}
                seen = [token.text.encode("utf-8") for token in field.analyzer(text)]
                length = sum(freq for _, freq, _, _ in field.index(text))
            order = list(dict.fromkeys(seen))
            assert _utf8(terms) == order, (lang, text)
            assert list(zip(weights, values, strict=True)) == [want[t] for t in order], (lang, text)
            assert got_length == length


def test_a_field_with_another_analyzer_is_not_taken_for_ours() -> None:
    from whoosh.fields import TEXT

    assert not is_fast_text(TEXT())
    assert not is_fast_text(build_schema()["tags"])


def _segment_files(directory: Path, docs: list[Any], fast: bool, compression: int = 0) -> dict[str, bytes]:
    """The term table and postings of one uncompounded segment, by extension."""
    ix = windex.create_in(str(directory), build_schema(), indexname=INDEX_NAME)
    codec = W3Codec(compression=compression)
    writer = FastSegmentWriter(ix, codec=codec, compound=False) if fast else ix.writer(codec=codec, compound=False)
    _add_all(writer, docs, fast)
    writer.commit(merge=False)
    return {p.suffix: p.read_bytes() for p in directory.iterdir() if p.suffix in (".trm", ".pst")}


@pytest.mark.parametrize("compression", [0, 3], ids=["plain", "zlib"])
def test_the_fast_writer_writes_whooshs_term_table_and_postings_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: int) -> None:
    import core.index.field_analysis as field_analysis
    import core.index.w3_postings as w3_postings

    # A note's title items (and a heading path's) are shared by its chunks, and a lone position's encoding by every
    # term holding it: pickle then writes a repeated value as a back-reference (the same
    # postings in fewer bytes). Unshared, the bytes must be Whoosh's own.
    class Forget(dict[int, bytes]):
        def get(self, key: int, default: Any = None) -> Any:
            return default

    monkeypatch.setattr(field_analysis, "MEMO_FIELDS", frozenset())
    monkeypatch.setattr(field_analysis, "_SINGLE", Forget())
    monkeypatch.setattr(w3_postings, "BLOCK_PROTOCOL", 2)  # Whoosh's (see BLOCK_PROTOCOL for why not ours)
    monkeypatch.setattr(w3_postings, "FLUSH_BYTES", 4096)  # many flushes of both buffers
    docs = [replace(d, rel_path=f"c{i}/{d.rel_path}") for i in range(12) for d in _docs()]  # long lists: several blocks
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    slow = _segment_files(tmp_path / "a", docs, fast=False, compression=compression)
    fast = _segment_files(tmp_path / "b", docs, fast=True, compression=compression)
    assert set(slow) == {".trm", ".pst"}
    assert len(slow[".pst"]) > 100_000
    assert fast[".trm"] == slow[".trm"]
    assert fast[".pst"] == slow[".pst"]


def test_plain_words_cut_text_without_cjk_as_pieces_does() -> None:
    from core.index.analysis import has_cjk, pieces, plain_words

    texts = [*note_texts(NOTES).items(), *((rel, (VAULTS / rel).read_text(encoding="utf-8")) for rel in SAMPLES if (VAULTS / rel).is_file())]
    for rel, text in texts:
        if not has_cjk(text):
            assert plain_words(text) == [w for _, _, w in pieces(text)], rel
    text = "Ünïcode wörds, snake_case 3.14 os.path. end. ½ x² ٣ ok"
    assert plain_words(text) == [w for _, _, w in pieces(text)]


def test_the_analyser_gives_each_field_what_whoosh_gives_it() -> None:
    from core.index.field_analysis import FieldAnalyser

    schema = build_schema()
    analyser = FieldAnalyser(schema)
    for doc in _docs():
        for fields in document_fields(doc):
            lang = fields["lang"]
            got = analyser.analyse(fields, lang)
            with language(lang):
                want = {name: list(schema[name].index(value)) for name, value in fields.items() if schema[name].indexed}
            for answer in (got, analyser.analyse(fields, lang)):  # the second time from the memo
                assert answer.keys() == want.keys()
                for name, (terms, weights, values, length) in answer.items():
                    assert sorted(zip(_utf8(terms), weights, values, strict=True)) == sorted((t, w, v) for t, _, w, v in want[name]), name
                    assert length == (sum(f for _, f, _, _ in want[name]) if schema[name].scorable else 0), name
    assert [name for name in schema.names() if analyser.plain_id[name]]  # the fast ID path ran


def test_a_bulk_batch_is_written_with_the_collector_paused_and_it_runs_again_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from core.index.keyword_index import BULK_NOTES, KeywordIndex

    seen: list[bool] = []
    original = FastSegmentWriter.add_note

    def spy(self: FastSegmentWriter, rows: Any, langs: Any) -> None:
        seen.append(gc.isenabled())
        original(self, rows, langs)

    monkeypatch.setattr(FastSegmentWriter, "add_note", spy)
    docs = _docs()
    bulk = [replace(docs[i % len(docs)], rel_path=f"c{i}/{docs[i % len(docs)].rel_path}") for i in range(BULK_NOTES)]
    index = KeywordIndex(tmp_path / "ix")
    index.apply([], docs[:2])  # a live edit: the collector keeps running
    assert seen and all(seen)
    seen.clear()
    index.apply([], bulk)
    assert seen and not any(seen)
    assert gc.isenabled()
    monkeypatch.setattr(FastSegmentWriter, "add_note", lambda self, rows, langs: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        index.apply([], bulk)
    assert gc.isenabled()  # also after a failed batch
    assert index.doc_count() == sum(len(d.chunks) for d in docs[:2]) + sum(len(d.chunks) for d in bulk)


@pytest.mark.parametrize("changed_notes", [0, 4], ids=["no-deletions", "with-deletions"])
def test_a_merge_of_segments_writes_what_whoosh_writes(tmp_path: Path, changed_notes: int, source: str) -> None:
    docs = [replace(d, rel_path=f"c{i}/{d.rel_path}") for i in range(12) for d in _docs(source)]  # long lists: several blocks
    third = len(docs) // 3
    first, second, last = docs[:third], docs[third : 2 * third], docs[2 * third :]
    changed = first[:changed_notes]  # written again in the last round: their old chunks are deleted

    def write(directory: Path, fast: bool) -> Any:
        directory.mkdir()
        ix = windex.create_in(str(directory), build_schema(), indexname=INDEX_NAME)
        for batch, optimize in ((first, False), (second, False), (last + changed, True)):
            writer = FastSegmentWriter(ix, codec=W3Codec(compression=0)) if fast else ix.writer(codec=W3Codec(compression=0))
            for doc in batch:
                writer.delete_by_term("rel_path", doc.rel_path)
            _add_all(writer, batch, fast)
            writer.commit(optimize=True) if optimize else writer.commit(merge=False)
        assert len(ix._segments()) == 1
        return ix

    slow = index_dump(write(tmp_path / "a", fast=False))
    fast = index_dump(write(tmp_path / "b", fast=True))
    assert sum(1 for k in slow if k[3:].isdigit()) == sum(len(d.chunks) for d in docs)  # merged: the deleted are gone
    assert slow.keys() == fast.keys()
    for key in slow:
        assert fast[key] == slow[key], key


def test_the_term_pool_files_postings_flat_and_gives_them_back_in_whooshs_order() -> None:
    from core.index.term_pool import TermPool

    pool = TermPool()
    pool.add_items("body", 0, ((b"b", b"a"), (1.0, 2.0), (b"x", b""), 3))
    pool.add_items("body", 1, ((b"a",), (1.5,), (b"y",), 1))
    pool.add_items("title", 1, ((), (), (), 0))  # no terms: the field stays out of the segment
    pool.add(("aliases", b"z", 2, 1.0, None))
    pool.add(("body", b"b", 2, 3.0, b"w"))
    assert pool.count == 5
    assert pool.fieldnames == {"body", "aliases"}
    assert pool.postings["body"][b"a"] == [0, 2.0, b"", 1, 1.5, b"y"]  # docnum, weight, value, ... (no tuples)
    assert list(pool.iter_postings()) == [
        ("aliases", b"z", 2, 1.0, None),
        ("body", b"a", 0, 2.0, b""),
        ("body", b"a", 1, 1.5, b"y"),
        ("body", b"b", 0, 1.0, b"x"),
        ("body", b"b", 2, 3.0, b"w"),
    ]


def test_a_chunk_with_a_field_the_schema_lacks_is_refused_even_after_its_key_set_was_seen(tmp_path: Path) -> None:
    from whoosh.fields import UnknownFieldError

    fields = document_fields(_docs()[0])[0]
    ix = windex.create_in(str(tmp_path), build_schema(), indexname=INDEX_NAME)
    writer = FastSegmentWriter(ix, codec=W3Codec(compression=0))
    writer.add_document(**fields, _lang=fields["lang"])
    writer.add_document(**fields, _lang=fields["lang"])  # the same keys: their names are remembered
    with pytest.raises(UnknownFieldError):
        writer.add_document(**fields, no_such_field="x", _lang=fields["lang"])
    with pytest.raises(UnknownFieldError):  # refused again: a refused key set is not remembered
        writer.add_document(**fields, no_such_field="x", _lang=fields["lang"])
    writer.add_document(**{k: v for k, v in fields.items() if k != "tags"}, _lang=fields["lang"])  # another key set
    writer.commit()
    with ix.searcher() as searcher:
        assert searcher.doc_count() == 3


@pytest.mark.parametrize("positions", [[], [0, 7, 70], [10, 65_535], [10, 65_535, 65_536, 2**31 + 5]])
def test_the_term_tables_key_positions_widen_as_whooshs_growable_array_does(positions: list[int]) -> None:
    from whoosh.util.numlists import GrowableArray

    from core.index.w3_postings import _extend_index

    whooshs, ours = GrowableArray("H"), GrowableArray("H")
    whooshs.extend(positions)
    _extend_index(ours, positions)
    assert ours.typecode == whooshs.typecode
    assert list(ours) == list(whooshs)


@pytest.mark.parametrize("size", [0, 1, 1000, 70_000, 300_000])
def test_stored_plain_is_a_zlib_stream_any_reader_inflates(size: int) -> None:
    data = (b"the same few words again and again " * (size // 35 + 1))[:size]  # deflate would make it a tenth
    plain = stored_plain(data, 3)
    assert zlib.decompress(plain) == data
    assert size <= len(plain) <= size + size // 100 + 64  # stored blocks: a few bytes each, nothing deflated


def test_stored_fields_are_kept_plain_and_read_back_as_whoosh_writes_them(tmp_path: Path) -> None:
    # Whoosh's writer deflates a chunk's stored fields (a sentence of it is nowhere in its files); ours keeps them in
    # zlib's stored blocks, which Whoosh's reader reads alike; the second commit merges all into one segment.
    docs = _docs()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    slow = _write(tmp_path / "a", docs, fast=False, twice=True, optimize=True)
    fast = _write(tmp_path / "b", docs, fast=True, twice=True, optimize=True)
    assert len(fast._segments()) == 1
    with slow.searcher() as s_slow, fast.searcher() as s_fast:
        stored = [s_slow.stored_fields(n) for n in range(s_slow.doc_count_all())]
        assert stored == [s_fast.stored_fields(n) for n in range(s_fast.doc_count_all())]
    sentence = max((fields["body"] for fields in stored if fields.get("body")), key=len).encode()[:60]
    assert len(sentence) == 60
    assert not any(sentence in p.read_bytes() for p in (tmp_path / "a").iterdir())
    assert any(sentence in p.read_bytes() for p in (tmp_path / "b").iterdir())
