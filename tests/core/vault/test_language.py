"""Cheap language detection, on real tldr pages in four languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.vault.language import detect_language, prose

TLDR = next((p / "shared/data/vaults/tldr" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))


@pytest.mark.skipif(not TLDR.is_dir(), reason="needs the tldr vault")
@pytest.mark.parametrize(("folder", "lang"), [("pages", "en"), ("pages.de", "de"), ("pages.zh", "zh"), ("pages.ja", "ja")])
def test_tldr_pages_are_detected_in_their_language(folder: str, lang: str) -> None:
    pages = sorted((TLDR / folder / "common").glob("*.md"))[:150]
    right = sum(detect_language(p.read_text(encoding="utf-8")) == lang for p in pages)
    assert right >= 0.97 * len(pages)


def test_code_does_not_make_a_chinese_note_english() -> None:
    text = "- 创建存档并将其写入文件：\n\n`tar cf target.tar file1 file2 file3 --verbose --directory path`\n\n```\nls -la /usr/local/bin\n```\n"
    assert detect_language(text) == "zh"
    assert "tar cf" not in prose(text)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Le chat est sur la table et il dort dans le jardin.", "fr"),
        ("El perro come en la cocina y los niños juegan con la pelota.", "es"),
        ("Это простой текст на русском языке для проверки.", "ru"),
        ("한국어 텍스트를 검색할 수 있어야 합니다.", "ko"),
        ("The cat sat on the mat and it was happy.", "en"),
    ],
)
def test_other_languages(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_too_little_prose_has_no_opinion() -> None:
    assert detect_language("`tar xf a.tar`") == ""
    assert detect_language("## Setup") == ""


def test_the_one_search_for_counted_scripts_misses_no_character_they_count() -> None:
    """`detect_language` skips its four CJK/Cyrillic passes when `_ANY_COUNTED` finds nothing: every
    character any of them would count must be one `_ANY_COUNTED` finds (and curly quotes are not)."""
    from core.vault import language

    counted = (language._HAN, language._KANA, language._HANGUL, language._CYRILLIC_WORD)
    missed = [cp for cp in range(0x110000) if any(p.match(chr(cp)) for p in counted) and not language._ANY_COUNTED.holds(chr(cp))]
    assert missed == []
    assert not language._ANY_COUNTED.found("It’s “quoted” — café, naïve")
    assert detect_language("Rust’s “ownership” — это не так, и это важно для нас всех здесь") == "ru"
