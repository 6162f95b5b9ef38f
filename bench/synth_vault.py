"""Deterministic synthetic vault generator for indexing and search benchmarks.

Real vaults cannot be shipped with the benchmarks, so this writes a stand-in
with the statistics that matter to Cairn: Zipfian word frequencies (so BM25
sees realistic document frequencies), topical folders (so queries have
right answers that cluster), YAML front matter with skewed tags, nested
headings for the chunker, and log-normal note sizes with a long tail.

Only the standard library's ``random.Random`` is used: its ``random()``,
``choices()`` and ``sample()`` streams are stable across Python versions, so a
given seed produces byte-identical vaults on every machine.

Usage::

    python bench/synth_vault.py OUT --notes 10000 --seed 7
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

_ONSETS = (
    "b c d f g h j k l m n p r s t v w z br cl dr fl gr pl pr sk st tr th sh ch qu"
).split()
_VOWELS = "a e i o u ai ea io ou y".split()
_CODAS = ["", "", "", "", "", "", *"n r s l t m nd rk st x ng".split()]

_FUNCTION_WORDS = (
    "the of and to a in is that for it as was with be on not this by are or at from but have an they "
    "which you were their one all we can her has there been if more when will would who so no also into "
    "than its some then only other new these two may any our over such after most first"
).split()

_CONTENT_WORDS = (
    "time people year way day thing man world life hand part child eye woman place work week case point "
    "government company number group problem fact home water room mother area money story month lot right "
    "study book job word business issue side kind head house service friend father power hour game line end "
    "member law car city community name president team minute idea kid body information back parent face "
    "others level office door health person art war history party result change morning reason research "
    "girl guy moment air teacher force education foot boy age policy process music market sense nation plan "
    "college interest death experience effect class control field development role effort rate heart drug "
    "show leader light voice wife police mind price report decision son view relationship town road arm "
    "difference value building action model season society tax director position player record paper space "
    "ground form event official matter center couple site project activity star table need court oil "
    "situation cost industry figure street image phone data picture practice piece land product doctor wall "
    "patient worker news test movie north love support technology step baby computer type attention film tree "
    "source organization hair window evidence population site economy medium meeting budget server database "
    "backup release deploy query index search vector cache latency schema migration config token network "
    "garden recipe travel flight hotel invoice contract design review sprint roadmap feedback customer "
    "account password license kernel driver library module function variable error warning bug patch branch "
    "commit merge docker cluster node storage metric dashboard alert incident outage runbook coffee bread "
    "cheese tomato garlic onion lemon chicken soup salad mountain river forest beach island winter summer "
    "autumn spring holiday birthday wedding doctor dentist insurance mortgage tax salary pension interview "
    "resume manager engineer designer analyst quarter goal milestone deadline priority risk estimate"
).split()

_TAG_POOL = (
    "todo idea meeting project reading book research python rust javascript devops infra security "
    "personal work health fitness recipe travel finance journal weekly daily review retro planning "
    "draft archive reference howto til bug incident design api database search ml llm writing "
    "learning family home garden music film podcast paper quote people hiring onboarding budget "
    "vendor legal roadmap okr customer support release ops"
).split()

_TOP_FOLDERS = ("projects", "areas", "resources", "journal", "meetings", "archive", "inbox")
_SUBFOLDERS_PER_TOP = 7
_DOC_TYPES = ("note", "meeting", "project", "reference", "journal", "howto", "decision")
_DOC_TYPE_WEIGHTS = (40, 15, 12, 12, 10, 7, 4)
_CODE_LANGS = ("python", "bash", "sql", "yaml", "json", "")

_VOCAB_SIZE = 20_000
_ZIPF_S = 1.07
_ZIPF_Q = 2.7  # Zipf-Mandelbrot offset: flattens the very top like real text
_TOPIC_WORDS = 150
_TOPIC_SHARE = 0.2
_SIZE_MEDIAN = 1300  # plus the last block's overshoot gives a ~1.5 kB median
_SIZE_SIGMA = 0.8
_SIZE_CAP = 14_500  # target; the last block may overshoot to ~15 kB
_FIRST_DAY = date(2023, 1, 1)
_DAYS = (date(2026, 12, 31) - _FIRST_DAY).days + 1


@dataclass(frozen=True, slots=True)
class GenStats:
    """What :func:`generate_vault` wrote (``elapsed_s`` is the only non-deterministic field)."""

    n_notes: int
    n_folders: int
    total_bytes: int
    min_bytes: int
    max_bytes: int
    median_bytes: int
    vocab_size: int
    n_tags: int
    elapsed_s: float


def _unique_content_words() -> list[str]:
    return list(dict.fromkeys(_CONTENT_WORDS))


def _zipf_cum_weights(n: int, s: float = _ZIPF_S, q: float = _ZIPF_Q) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + q) ** s for rank in range(1, n + 1)))


def _pseudo_word(rng: random.Random) -> str:
    # Mostly 2-3 syllables: keeps pseudo-words near real English word lengths.
    syllables = rng.choices((1, 2, 3, 4), weights=(3, 6, 3, 1))[0]
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))


def _build_vocab(rng: random.Random) -> list[str]:
    """Words in frequency-rank order: function words, then real words spread among pseudo-words."""
    taken = set(_FUNCTION_WORDS) | set(_CONTENT_WORDS)
    content = [w for w in _unique_content_words() if w not in _FUNCTION_WORDS]
    n_pseudo = _VOCAB_SIZE - len(_FUNCTION_WORDS) - len(content)
    pseudo: list[str] = []
    while len(pseudo) < n_pseudo:
        word = _pseudo_word(rng)
        if len(word) > 2 and word not in taken:
            taken.add(word)
            pseudo.append(word)
    # Real content words land every ~12 ranks in the head, so common English
    # nouns have the mid-to-high document frequencies they have in real notes.
    ranked = list(_FUNCTION_WORDS)
    pseudo_iter = iter(pseudo)
    for word in content:
        ranked.extend(itertools.islice(pseudo_iter, 12))
        ranked.append(word)
    ranked.extend(pseudo_iter)
    return ranked


@dataclass(frozen=True, slots=True)
class _Topic:
    folder: str
    words: list[str]
    cum_weights: list[float]
    home_tag: str


class _Writer:
    """Holds the seeded generator and the word tables for one vault."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.vocab = _build_vocab(self.rng)
        self.vocab_cw = _zipf_cum_weights(len(self.vocab))
        self.tag_cw = _zipf_cum_weights(len(_TAG_POOL), s=1.0, q=1.0)
        self.topics = self._make_topics()
        self.topic_cw = _zipf_cum_weights(len(self.topics), s=0.8, q=1.0)

    def _make_topics(self) -> list[_Topic]:
        rng = self.rng
        topics: list[_Topic] = []
        topic_cw = _zipf_cum_weights(_TOPIC_WORDS)
        for top in _TOP_FOLDERS:
            for sub in rng.sample(_unique_content_words()[:200], _SUBFOLDERS_PER_TOP):
                # Topic words come from the mid/low-frequency band, where terms discriminate.
                words = rng.sample(self.vocab[400:], _TOPIC_WORDS)
                topics.append(_Topic(f"{top}/{sub}", words, topic_cw, rng.choice(_TAG_POOL)))
        rng.shuffle(topics)  # folder size rank independent of folder name
        return topics

    def words(self, n: int, topic: _Topic) -> list[str]:
        rng = self.rng
        out = rng.choices(self.vocab, cum_weights=self.vocab_cw, k=n)
        n_topic = round(n * _TOPIC_SHARE)
        if n_topic:
            slots = rng.sample(range(n), n_topic)
            picks = rng.choices(topic.words, cum_weights=topic.cum_weights, k=n_topic)
            for slot, word in zip(slots, picks):
                out[slot] = word
        return out

    def sentence(self, topic: _Topic) -> str:
        rng = self.rng
        words = self.words(rng.randint(5, 18), topic)
        if len(words) > 8 and rng.random() < 0.4:
            cut = rng.randint(3, len(words) - 3)
            words[cut] += ","
        text = " ".join(words)
        return text[0].upper() + text[1:] + ("?" if rng.random() < 0.05 else ".")

    def paragraph(self, topic: _Topic) -> str:
        return " ".join(self.sentence(topic) for _ in range(self.rng.randint(2, 6)))

    def title(self, topic: _Topic) -> str:
        text = " ".join(self.words(self.rng.randint(2, 6), topic))
        return text[0].upper() + text[1:]

    def bullet_list(self, topic: _Topic) -> str:
        rng = self.rng
        ordered = rng.random() < 0.3
        items = []
        for i in range(1, rng.randint(3, 7) + 1):
            marker = f"{i}." if ordered else "-"
            box = "[ ] " if not ordered and rng.random() < 0.15 else ""
            items.append(f"{marker} {box}{' '.join(self.words(rng.randint(2, 10), topic))}")
        return "\n".join(items)

    def code_block(self, topic: _Topic) -> str:
        rng = self.rng
        lang = rng.choice(_CODE_LANGS)
        lines = []
        for _ in range(rng.randint(2, 10)):
            name, arg = self.words(2, topic)
            indent = "    " * rng.randint(0, 2)
            lines.append(f"{indent}{name}_{rng.randint(0, 99)} = {arg}({rng.randint(0, 999)})")
        return f"```{lang}\n" + "\n".join(lines) + "\n```"

    def tags(self, topic: _Topic) -> list[str]:
        rng = self.rng
        count = rng.choices((0, 1, 2, 3, 4, 5), weights=(10, 25, 30, 20, 10, 5))[0]
        tags = rng.choices(_TAG_POOL, cum_weights=self.tag_cw, k=count)
        if count and rng.random() < 0.5:
            tags[0] = topic.home_tag
        return list(dict.fromkeys(tags))

    def note(self, topic: _Topic) -> tuple[str, str]:
        """Return (title, full text) for one note in ``topic``."""
        rng = self.rng
        title = self.title(topic)
        day = _FIRST_DAY + timedelta(days=rng.randrange(_DAYS))
        doc_type = rng.choices(_DOC_TYPES, weights=_DOC_TYPE_WEIGHTS)[0]
        tags = ", ".join(json.dumps(t) for t in self.tags(topic))
        # json.dumps gives a valid YAML double-quoted scalar, so titles such as
        # "No" or "Null" stay strings.
        front = f"---\ntitle: {json.dumps(title)}\ntags: [{tags}]\ndate: {day.isoformat()}\ndoc_type: {doc_type}\n---\n"
        target = min(_SIZE_CAP, int(rng.lognormvariate(math.log(_SIZE_MEDIAN), _SIZE_SIGMA)))
        max_depth = rng.choices((1, 2, 3, 4), weights=(2, 5, 3, 1))[0]
        blocks: list[str] = []
        if rng.random() < 0.7:
            blocks.append(f"# {title}")
        size = len(front)
        while size < target:
            roll = rng.random()
            if roll < 0.15:
                level = 1 if max_depth == 1 else rng.randint(2, max_depth)
                block = "#" * level + " " + self.title(topic)
            elif roll < 0.27:
                block = self.bullet_list(topic)
            elif roll < 0.30:
                block = self.code_block(topic)
            else:
                block = self.paragraph(topic)
            blocks.append(block)
            size += len(block) + 2
        return title, front + "\n" + "\n\n".join(blocks) + "\n"


def _file_name(title: str, rng: random.Random, used: dict[str, int]) -> str:
    # Half the notes use "Title With Spaces.md" (Obsidian style), half kebab-case,
    # so path handling with spaces is exercised.
    words = title.split()[:6]
    stem = " ".join(w.capitalize() for w in words) if rng.random() < 0.5 else "-".join(words).lower()
    key = stem.casefold()  # unique even on case-insensitive file systems
    used[key] = used.get(key, 0) + 1
    return f"{stem}.md" if used[key] == 1 else f"{stem} {used[key]}.md"


def generate_vault(out_dir: Path, n_notes: int, seed: int = 7, shape: str = "plain") -> GenStats:
    """Write ``n_notes`` synthetic markdown notes below ``out_dir``.

    Args:
        out_dir: Target folder; must be missing or empty so the result is exactly
            what ``seed`` produces (no leftovers from another run).
        n_notes: Number of notes to write.
        seed: Seed for every random choice; same seed → byte-identical files.
        shape: "plain" (headings, paragraphs, lists, code) or "obsidian" (also properties,
            wikilinks, callouts, tables, tasks, embeds, block ids: `synth_obsidian.py`).

    Returns:
        Counts and sizes of what was written.

    Raises:
        FileExistsError: ``out_dir`` exists and is not empty.
        ValueError: ``n_notes`` is negative.
    """
    if n_notes < 0:
        raise ValueError(f"n_notes must be >= 0, got {n_notes}")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty; use a new folder so the vault matches seed {seed} exactly")
    started = time.perf_counter()
    writer = _writer(shape, seed)
    rng = writer.rng
    for topic in writer.topics:
        (out_dir / topic.folder).mkdir(parents=True, exist_ok=True)
    used: dict[str, dict[str, int]] = {topic.folder: {} for topic in writer.topics}
    sizes: list[int] = []
    for _ in range(n_notes):
        topic = rng.choices(writer.topics, cum_weights=writer.topic_cw)[0]
        title, text = writer.note(topic)
        data = text.encode("utf-8")
        (out_dir / topic.folder / _file_name(title, rng, used[topic.folder])).write_bytes(data)
        sizes.append(len(data))
    sizes.sort()
    return GenStats(
        n_notes=n_notes,
        n_folders=len(writer.topics) + len(_TOP_FOLDERS),
        total_bytes=sum(sizes),
        min_bytes=sizes[0] if sizes else 0,
        max_bytes=sizes[-1] if sizes else 0,
        median_bytes=sizes[len(sizes) // 2] if sizes else 0,
        vocab_size=len(writer.vocab),
        n_tags=len(_TAG_POOL),
        elapsed_s=time.perf_counter() - started,
    )


def _writer(shape: str, seed: int) -> _Writer:
    if shape == "plain":
        return _Writer(seed)
    if shape == "obsidian":
        from synth_obsidian import ObsidianWriter

        return ObsidianWriter(seed)
    raise ValueError(f"unknown shape {shape!r}: plain or obsidian")


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description="Write a deterministic synthetic markdown vault.")
    parser.add_argument("out", type=Path, help="output folder (must be missing or empty)")
    parser.add_argument("--notes", type=int, default=10_000, help="number of notes (default 10000)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--shape", choices=("plain", "obsidian"), default="plain", help="what the notes hold (default plain)")
    args = parser.parse_args(argv)
    try:
        stats = generate_vault(args.out, args.notes, args.seed, args.shape)
    except (FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {stats.n_notes} notes in {stats.n_folders} folders to {args.out}: "
        f"{stats.total_bytes / 1e6:.1f} MB, median {stats.median_bytes} B, max {stats.max_bytes} B, "
        f"{stats.elapsed_s:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
