"""Text signals on real notes: link share of hub notes, query words present."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.index.analysis import Stemmer
from core.index.keyword_schema import analyzer
from core.search.signals import LINK_FLOOR, link_factor, link_share, terms_present

TIL = next(
    (p / "shared" / "data" / "vaults" / "simonw-til" for p in Path(__file__).resolve().parents if (p / "shared" / "data" / "vaults" / "simonw-til").is_dir()),
    Path("/nonexistent"),
)


def test_a_link_list_is_mostly_links_and_prose_is_not() -> None:
    hub = "\n".join(f"* [Note {i}](https://example.com/notes/{i}) - 2024-01-{i:02d}" for i in range(1, 20))
    prose = "I wanted a way to shrink PNG files. See [pngquant](https://pngquant.org/) - it reduces the colours a lot, then oxipng compresses."
    assert link_share(hub).share > 0.8 and link_share(hub).factor == pytest.approx(LINK_FLOOR)
    assert link_share(prose).share < 0.5 and link_share(prose).factor == 1.0
    assert link_share("").factor == 1.0
    assert link_share(hub).label == "mostly links (1.00) → ×0.40"


def test_link_factor_ramps_between_its_thresholds() -> None:
    assert link_factor(0.6) == 1.0
    assert link_factor(0.725) == pytest.approx(0.7)
    assert link_factor(1.0) == pytest.approx(LINK_FLOOR)


def test_a_few_cited_sources_do_not_make_a_hub() -> None:
    short = "\n".join(f"[Source {i}](https://example.com/{i})" for i in range(3))
    assert link_share(short).share == 1.0 and link_share(short).factor == 1.0


@pytest.mark.skipif(not TIL.is_dir(), reason="real vaults not available")
def test_real_hub_readme_is_penalised_and_real_notes_are_not() -> None:
    readme = (TIL / "README.md").read_text("utf-8")[20_000:24_000]  # a slice of its long link list
    assert link_share(readme).factor < 0.6
    for note in ("pytest/syrupy.md", "cloudflare/rate-limiting.md", "gis/mapzen-elevation-tiles.md"):
        assert link_share((TIL / note).read_text("utf-8")).factor == 1.0, note


def test_terms_present_uses_the_index_stemming() -> None:
    stemmer = Stemmer(analyzer())
    stems = frozenset({"publish", "vault"})
    assert terms_present("Publishing the Vault", stems, stemmer) == stems
    assert terms_present("nothing here", stems, stemmer) == frozenset()
