"""Extractive units and answers on real notes: code is quoted verbatim, link lists never."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer.extractive import render
from core.answer.models import Quote
from core.answer.units import CODE, ITEM, PROSE, ROW, is_boilerplate, split_units

VAULTS = Path(__file__).resolve().parents[4] / "shared" / "data" / "vaults"
if not VAULTS.is_dir():
    VAULTS = Path(__file__).resolve().parents[5] / "shared" / "data" / "vaults"


def real(rel: str) -> str:
    path = VAULTS / rel
    if not path.is_file():
        pytest.skip("the shared real vaults are not beside this checkout")
    return path.read_text("utf-8")


def test_a_fenced_code_block_is_one_unit_with_its_language_and_intro() -> None:
    units = split_units(real("simonw-til/sqlite/unix-timestamp-milliseconds-sqlite.md"))
    code = [u for u in units if u.kind == CODE]
    assert code[0].language == "sql" and code[0].text == "select strftime('%s', 'now');"
    assert code[0].intro == "Fetching seconds since the epoch is easy:"
    assert any(u.text == "select unixepoch('subsec'); " or u.text.startswith("select unixepoch('subsec');") for u in code)


def test_an_indented_code_block_is_code_and_keeps_its_lead() -> None:
    units = split_units(real("simonw-til/sqlite/enabling-wal-mode.md"))
    wal = next(u for u in units if u.kind == CODE and "PRAGMA journal_mode=WAL" in u.text)
    assert wal.text == "sqlite3 github.db 'PRAGMA journal_mode=WAL;'"
    assert wal.intro == "Here's the incantation:" and "turning on WAL" in wal.lead


def test_a_tldr_command_is_code_introduced_by_its_list_item() -> None:
    units = split_units(real("tldr/pages/common/lsof.md"))
    port = next(u for u in units if u.kind == CODE and u.text.startswith("lsof -i"))
    assert port.text == "lsof -i :{{port}}" and port.intro == "- Find the process that opened a local internet port:"
    assert not any("More information" in u.text for u in units), "a bare link line is not an answer"


def test_link_list_lines_are_never_units() -> None:
    units = split_units(real("simonw-til/README.md")[:6000])
    assert not [u for u in units if u.kind == ITEM], "the index note's link list must not be quotable"
    assert is_boilerplate("* [Only run GitHub Action on push to master / main](https://github.com/x) - 2020-04-19")
    assert is_boilerplate("See https://github.com/simonw/sf-tree-history/issues/1")
    assert not is_boilerplate("To find out which process is listening on a specific port, use `lsof -i :8000`.")


def test_table_rows_and_prose_sentences_are_units() -> None:
    units = split_units("Intro sentence one is here. And a second sentence follows.\n\n| Name | Role |\n|---|---|\n| Priya Natarajan | owns releases |\n")
    assert [u.kind for u in units] == [PROSE, PROSE, ROW]  # "Name | Role" is too short to say anything
    assert units[2].text == "Priya Natarajan | owns releases"


def test_quoted_sentences_show_link_labels_while_the_quote_stays_verbatim() -> None:
    text = "The release is signed off by [[People/Priya Natarajan|Priya]] using [the checklist](Release%20checklist.md) every time."
    quote = Quote(1, text, "prose", "a.md", "A", 0, 0, len(text.encode()))
    answer = render([quote])
    assert "signed off by Priya using the checklist every time. [1]" in answer
    assert "[[" not in answer and "](" not in answer
    assert quote.text == text  # what is checked against the note is untouched
def test_identifier_parts_and_tldr_mnemonics_count_as_words() -> None:
    from core.answer.context import stems
    from core.answer.extractive import _words

    assert stems("list file") <= _words("Lis[t] the contents of a tar [f]ile [v]erbosely:")
    assert stems("api key") <= _words("The deploy api_key = [REDACTED] lives here.")
