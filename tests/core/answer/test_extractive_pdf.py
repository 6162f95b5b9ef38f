"""The extractive answer on text taken out of real PDFs (R manuals from Debian's r-doc-pdf).

PDF text has no code fences or backticks: the answer to a how-to question is a sentence holding
`attach()` or `prod(svd(M)$d)`, and manuals of one project repeat their licence notice. The
fixture holds the sources the retriever gave for three questions of bench/pdf_golden.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.answer.extractive import Embed, extract, term_weights
from core.answer.models import Source
from core.base.models import ChunkRef, Hit

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "pdf" / "r-manuals-ask.json"


@pytest.fixture(scope="module")
def embed() -> Embed:
    from core.providers.embedding import MiniLMEmbedder

    return MiniLMEmbedder().embed_documents


def sources(case: str) -> list[Source]:
    """The retrieved sources of one question, in rank order, as the pipeline hands them over."""
    out = []
    for number, s in enumerate(json.loads(FIXTURE.read_text("utf-8"))[case], start=1):
        hits = tuple(
            Hit(ChunkRef("r", s["path"], i, h["heading"]), 1.0 / number, h["title"], "", 0, len(h["text"]), None, None, (), text=h["text"], page=h["page"])
            for i, h in enumerate(s["hits"])
        )
        text = "\n\n".join(h.text for h in hits)
        out.append(Source(number, "r", s["path"], hits[0].title, hits[0].chunk.heading_path, tuple(range(len(hits))), 0, len(text), text, hits))
    return out


def test_a_how_to_answer_brings_the_sentence_that_names_the_function(embed: Embed) -> None:
    # The best sentence restates the question ("A useful facility would be ..."); the next one answers it.
    got = extract("how do I make the columns of a data frame available as variables by name", sources("attach"), embed)
    assert not got.abstained and "attach(" in got.answer, got.answer


def test_an_r_expression_without_backticks_counts_as_code(embed: Embed) -> None:
    got = extract("how do I calculate the absolute value of the determinant of a matrix", sources("determinant"), embed)
    assert not got.abstained and "prod(svd(M)$d)" in got.answer, got.answer


def test_a_licence_notice_repeated_across_manuals_is_not_quoted(embed: Embed) -> None:
    got = extract("under which licence is R distributed", sources("licence"), embed)
    assert not got.abstained and "GNU General Public License" in got.answer, got.answer
    assert not any(q.text.startswith("Permission is granted") for q in got.quotes), got.answer


def test_an_operator_named_in_the_question_is_a_key_word(embed: Embed) -> None:
    # R-lang 4.1.2: the one sentence about `...` shares only "argument" with the question's words.
    text = (
        "4.1.2 Arguments The formal arguments to the function define the variables whose values will be supplied "
        "at the time the function is invoked. The names of these arguments can be used within the function body. "
        "The ... argument is special and can contain any number of arguments. It is generally used if the number "
        "of arguments is unknown."
    )
    hit = Hit(ChunkRef("r", "manuals/R-lang.pdf", 0, ""), 1.0, "R Language Definition", "", 0, len(text), None, None, (), text=text, page=11)
    source = Source(1, "r", "manuals/R-lang.pdf", hit.title, "", (0,), 0, len(text), text, (hit,))
    # The word rarities of the eval vault (six manuals and simonw-til, 4,972 chunks): "function" is everywhere.
    weights = term_weights({"argument", "function", "hold"}, {"hold": 32, "argument": 344, "function": 851}, 4972)
    got = extract("what does the ... argument of a function hold", [source], embed, weights)
    # Whether to answer rests on the vault's word rarities (the eval answers it); the pick is the point here.
    assert got.best is not None and got.best.unit.text.startswith("The ... argument is special"), got.answer
