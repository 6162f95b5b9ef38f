"""`core.index.analysis.stemmer` loads one Snowball module, and stems exactly as Whoosh's own lookup does.

Whoosh's `whoosh.lang.snowball` package imports all fourteen stemmers to hand out one; Cairn
loads only the language's module (issue #30: a cold `cairn index` paid ~2.5 ms for the rest).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from whoosh.lang import stemmer_for_language
from whoosh.lang.stopwords import stoplists

from core.index.analysis import _SNOWBALL_MODULES, SNOWBALL, stemmer

REPO = Path(__file__).resolve().parents[3]


def _words(lang: str) -> list[str]:
    """The language's stop words (or kin's), and each longer one with every suffix its stemmer's rules name."""
    cls = type(stemmer_for_language(lang).__self__)
    suffixes = {s for name in dir(cls) for value in [getattr(cls, name)] if isinstance(value, tuple) for s in value if isinstance(s, str)}
    stops = sorted(stoplists.get(lang) or stoplists["it"] | stoplists["es"])  # Romanian has none: Romance words
    words = stops + [w + s for w in stops if len(w) >= 3 for s in sorted(suffixes)]
    return words[:: max(1, len(words) // 10_000)]  # every rule's suffix on many stems, at most ~20k words


@pytest.mark.parametrize("lang", sorted(_SNOWBALL_MODULES))
def test_the_lean_stemmer_gives_whooshs_stems(lang: str) -> None:
    words = _words(lang)
    assert len(words) > 500
    ours, whoosh = stemmer(lang), stemmer_for_language(lang)
    assert [ours(w) for w in words] == [whoosh(w) for w in words]


def test_a_language_without_a_snowball_module_goes_to_whoosh() -> None:
    for lang in sorted(SNOWBALL - set(_SNOWBALL_MODULES)):  # Turkish: Whoosh has no stemmer for it
        with pytest.raises(Exception) as lean:
            stemmer(lang)
        with pytest.raises(Exception) as whoosh:
            stemmer_for_language(lang)
        assert type(lean.value) is type(whoosh.value)


PROBE = """
import json, sys
from core.index.analysis import terms_for
german = terms_for("de").term("Häuser")
loaded = sorted(m for m in sys.modules if m.startswith("whoosh.lang.snowball"))
from whoosh.lang import stemmer_for_language  # Whoosh's own lookup still works afterwards, with the same class
same = type(stemmer_for_language("de").__self__) is type(terms_for("de").stem.__self__)
print(json.dumps([german, loaded, same, stemmer_for_language("fr")("maisons")]))
"""


def test_one_language_loads_one_snowball_module_and_whoosh_still_finds_all() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    german, loaded, same, french = json.loads(done.stdout.strip().splitlines()[-1])
    assert german == "haus"
    assert loaded == ["whoosh.lang.snowball.bases", "whoosh.lang.snowball.german"]
    assert same and french == "maison"
