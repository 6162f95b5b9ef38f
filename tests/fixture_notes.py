"""Generated notes in the shapes real vaults have, so the index's guard tests run from a clean clone.

The byte-equality, merge, parallel-build and thread tests used to read the real vaults beside
the checkout (../shared/data/vaults) and skipped without them. These notes, made from a fixed
seed, hold what those vaults exercise: front matter (title, tags, aliases, dates), headings at
several levels, wikilinks with anchors and labels, embeds, markdown links, inline tags, lists
(nested, numbered, tasks), fenced and indented code (with link-like text inside), tables,
quotes, and whole notes or sections in German, Japanese and Chinese.
"""

from __future__ import annotations

import random
from pathlib import Path

SEED = 27
FOLDERS = ("", "sql/", "python/", "git/", "pages.de/common/", "pages.ja/common/", "pages.zh/common/", "Projects/Deep/")
WORDS = (
    "archive backup branch buffer cache column commit container cursor database deploy docker document "
    "export field filter folder function github index install journal json kernel keyword language "
    "library link merge migrate module network notebook package parser pipeline plugin postgres process "
    "python query queue record release render request schema script search server shell snapshot sqlite "
    "stream string table template terminal token transaction update upload version virtual workflow "
    "running ran runs quickly slowly careful carefully happier happiest organised organising notes noted "
    "café naïve résumé über façade 3.14 os.path v1.5 ERR_TOKEN_EXPIRED snake_case CamelCase "
    "bash loop files fetch javascript datasette actions plan text full"
).split()
GERMAN = (
    "Die Dateien werden jede Nacht auf die externe Festplatte gesichert, damit keine Notizen verloren gehen.",
    "Erstellen Sie ein Archiv aus mehreren Dateien und komprimieren Sie es anschließend mit gzip.",
    "Häuser am Fluss wurden früher aus Holz gebaut; heute laufen die Arbeiten schneller und günstiger.",
    "Zeige alle Zweige des Repositorys an und wechsle danach zum gewünschten Zweig.",
)
JAPANESE = (
    "ファイルをアーカイブに追加して、圧縮したまま別のサーバーに転送します。",
    "このコマンドはディレクトリの内容を一覧表示し、隠しファイルも表示できます。",
    "猫がキーボードの上で寝ているので、今日は作業が進みません。",
    "データベースの索引を作り直すと、検索が速くなります。",
)
CHINESE = (
    "把多个文件打包成一个压缩包，然后通过网络发送到另一台服务器。",
    "列出目录中的所有文件，包括隐藏文件和它们的权限。",
    "我的猫在压缩包里睡觉，所以今天的工作没有进展。",
    "重建数据库索引以后，搜索速度明显提高了。",
)


def note_texts(count: int = 60, seed: int = SEED) -> dict[str, str]:
    """`count` notes by vault path, the same for the same seed."""
    rng = random.Random(seed)
    names = [f"{FOLDERS[i % len(FOLDERS)]}{_title(rng, i)}.md" for i in range(count)]
    return {name: _note(rng, i, name, names) for i, name in enumerate(names)}


def write_vault(root: Path, count: int = 60, seed: int = SEED) -> Path:
    """The generated notes written under `root` (created)."""
    for rel, text in note_texts(count, seed).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _title(rng: random.Random, i: int) -> str:
    return f"{' '.join(rng.sample(WORDS[:60], 2)).capitalize()} {i}"


def _sentence(rng: random.Random, words: int = 14) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(words))
    return f"The note {body}."  # "note" is in every sentence: long posting lists, several blocks


def _paragraph(rng: random.Random, names: list[str], sentences: int = 4) -> str:
    parts = [_sentence(rng) for _ in range(sentences)]
    other = rng.choice(names)[:-3].rpartition("/")[2]
    parts.insert(1, rng.choice((f"See [[{other}]].", f"As in [[{other}#Usage|the usage]].", f"Compare [{other}]({other.replace(' ', '%20')}.md).")))
    if rng.random() < 0.3:
        parts.append(f"#{rng.choice(WORDS[:40])}")
    if rng.random() < 0.2:
        parts.append(f"Run pip install {rng.choice(WORDS[:60])} first.")
    return " ".join(parts)


def _front_matter(rng: random.Random, name: str) -> str:
    title = name[:-3].rpartition("/")[2]
    tags = ", ".join(rng.sample(WORDS[:40], 2))
    return f"---\ntitle: {title}\ntags: [{tags}]\naliases: [{title.split()[0]} alias]\ndate: 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\n---\n"


def _blocks(rng: random.Random, names: list[str]) -> list[str]:
    word = rng.choice(WORDS[:60])
    return [
        f"- {_sentence(rng, 6)}\n- [[{rng.choice(names)[:-3]}]] and `{word}()`\n  - nested {word} item\n"
        f"1. first {word}\n2. second step\n- [ ] a task about {word}",
        f"```python\ndef {word}(note):\n    return note  # [[Not a link]] in code\n```",
        f"| Column | {word.capitalize()} |\n|---|---|\n| note | {rng.randint(1, 99)} |\n| {word} | [[Table link]] |",
        f"> {_sentence(rng, 8)}\n> quoted [[{rng.choice(names)[:-3]}|label]]",
        f"    indented code with [[Indented link]] and {word}",
        f"![[{word}.png]] an embed, and a link to https://example.com/{word}",
    ]


def _foreign(rng: random.Random, folder: str) -> str | None:
    lines = {"pages.de/common/": GERMAN, "pages.ja/common/": JAPANESE, "pages.zh/common/": CHINESE}.get(folder)
    if lines is None:
        return None
    return "\n\n".join(rng.sample(lines, 3))


def _note(rng: random.Random, i: int, name: str, names: list[str]) -> str:
    folder = name.rpartition("/")[0] + "/" if "/" in name else ""
    title = name[:-3].rpartition("/")[2]
    head = _front_matter(rng, name) if i % 3 else ""
    foreign = _foreign(rng, folder)
    if foreign is not None:  # a page in another language, as tldr's translations
        return f"{head}# {title}\n\n{foreign}\n\n- `tar -czf {title}.tar.gz`\n\n{rng.choice(GERMAN + JAPANESE + CHINESE)}\n"
    sections = [f"{head}# {title}", _paragraph(rng, names)]
    for level in (2, 2, 3)[: rng.randint(1, 3)]:
        sections.append(f"{'#' * level} {rng.choice(WORDS[:60]).capitalize()} usage")
        sections.append(_paragraph(rng, names, rng.randint(2, 6)))
        sections.extend(rng.sample(_blocks(rng, names), 2))
    if i % 7 == 0:  # mixed-language sections in an English note
        sections += ["## 日本語の節", rng.choice(JAPANESE), "## 中文", rng.choice(CHINESE), "## Deutsch", rng.choice(GERMAN)]
    return "\n\n".join(sections) + "\n"
