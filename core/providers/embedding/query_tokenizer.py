"""A tokenizer for one query that holds only the vocabulary entries the query can reach.

`cairn search` embeds one query and exits, and building MiniLM's tokenizer is mostly building
its 30,522-entry WordPiece map: 17-25 ms, all of it holding the GIL, on the path of every
new query. WordPiece only ever looks up substrings of the words it splits (the longest
prefix of a word first, then `##` + the longest prefix of what is left), and those words
are pieces of the normalised query: the normaliser maps the text to one string, and the
pre-tokeniser only cuts it (at spaces and punctuation). So a tokenizer whose vocabulary is
every entry that is a substring of the normalised query, as is or after `##`, tokenizes that
query exactly as the full one: each lookup the full one makes that can succeed succeeds here
with the same id, and every other part (normaliser, pre-tokeniser, special tokens, template)
is the shipped file's own. A query holding a special token's text (`[CLS]`, ...) is split
around it before normalising: for those the full tokenizer is used (`None`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenizers import Tokenizer


def query_tokenizer(path: Path, text: str) -> Tokenizer | None:
    """A tokenizer equivalent to `path`'s for `text` alone, or None when only the full one will do.

    ~8 ms (parsing the file) instead of ~25 ms; limits and padding are set by the caller
    as for the full tokenizer.
    """
    from tokenizers import Tokenizer

    spec = json.loads(path.read_bytes())
    added = [token["content"] for token in spec["added_tokens"]]
    model = spec["model"]
    if model.get("type") != "WordPiece" or any(content in text for content in added):
        return None
    vocab: dict[str, int] = model["vocab"]
    kept = {content: vocab[content] for content in added if content in vocab}
    kept.update(_reachable(_normalised(spec["normalizer"], text), vocab, model["continuing_subword_prefix"]))
    model["vocab"] = kept
    return Tokenizer.from_str(json.dumps(spec))


def _normalised(spec: dict[str, Any], text: str) -> str:
    """`text` through the file's own normaliser (the `normalizer` entry, built by the library)."""
    from tokenizers import Tokenizer

    bare = {"version": "1.0", "normalizer": spec, "model": {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}}
    normaliser = Tokenizer.from_str(json.dumps(bare)).normalizer
    return text if normaliser is None else normaliser.normalize_str(text)


def _reachable(normalised: str, vocab: dict[str, int], prefix: str) -> dict[str, int]:
    """Every vocabulary entry that is a substring of `normalised`, as is or after the continuation prefix."""
    longest = max(map(len, vocab), default=0)
    found: dict[str, int] = {}
    for start in range(len(normalised)):
        for end in range(start + 1, min(len(normalised), start + longest) + 1):
            piece = normalised[start:end]
            for entry in (piece, prefix + piece):
                token_id = vocab.get(entry)
                if token_id is not None:
                    found[entry] = token_id
    return found
