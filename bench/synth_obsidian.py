"""Obsidian-shaped notes for the synthetic vault: what most Obsidian users' notes hold.

Plain generated notes (headings, paragraphs, lists, code) are the shape tldr pages and
TIL notes have. Notes written in Obsidian carry more on nearly every page: properties in
front matter (status, rating, dates, links, aliases), `[[wikilinks]]` with labels and
headings, embeds, callouts (some holding a table, some right under a paragraph), tables,
task lines in the Tasks plugin's format, block ids, footnotes, `:emoji:` codes opening a
line, HTML comments, and numbered steps holding a fenced command, an embed or
sub-points (as documentation vaults write them). `ObsidianWriter` writes those over the same Zipfian
vocabulary and topics as `synth_vault._Writer`, so the two shapes are comparable.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta

from synth_vault import _DAYS, _DOC_TYPES, _FIRST_DAY, _SIZE_CAP, _SIZE_MEDIAN, _SIZE_SIGMA, _Topic, _Writer

_CALLOUTS = ("note", "tip", "info", "warning", "todo", "example", "quote", "success", "question", "bug")
_STATUSES = ("draft", "active", "done", "archived", "someday")
_EMOJI = ("warning", "bulb", "memo", "white_check_mark", "question")
_PRIORITIES = ("🔺", "⏫", "🔼", "🔽", "⏬", "", "", "")


class ObsidianWriter(_Writer):
    """`_Writer` whose notes are shaped as Obsidian vaults write them."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.titles: list[str] = []  # earlier notes' titles, so links point at notes that exist

    def link(self, topic: _Topic) -> str:
        rng = self.rng
        target = rng.choice(self.titles) if self.titles and rng.random() < 0.8 else self.title(topic)
        roll = rng.random()
        if roll < 0.2:
            return f"[[{target}|{' '.join(self.words(2, topic))}]]"
        if roll < 0.3:
            return f"[[{target}#{self.title(topic)}]]"
        return f"[[{target}]]"

    def linked_sentence(self, topic: _Topic) -> str:
        words = self.sentence(topic).split()
        for _ in range(self.rng.choice((0, 1, 1, 2))):
            words.insert(self.rng.randrange(1, len(words)), self.link(topic))
        return " ".join(words)

    def paragraph(self, topic: _Topic) -> str:
        text = " ".join(self.linked_sentence(topic) for _ in range(self.rng.randint(2, 6)))
        if self.rng.random() < 0.15:
            text += f" ^{self.rng.randrange(16**6):06x}"  # a block id
        if self.rng.random() < 0.05:
            text = f":{self.rng.choice(_EMOJI)}: {text}"  # an emoji code opening the line
        if self.rng.random() < 0.05:
            text += "[^1]\n\n[^1]: " + self.sentence(topic)
        return text

    def callout(self, topic: _Topic) -> str:
        rng = self.rng
        kind = rng.choice(_CALLOUTS)
        fold = rng.choice(("", "", "+", "-"))
        title = f" {self.title(topic)}" if rng.random() < 0.6 else ""
        lines = [f"> [!{kind}]{fold}{title}"]
        for k in range(rng.randint(1, 3)):
            if k:
                lines.append(">")
            lines.append("> " + (self.linked_sentence(topic) if rng.random() < 0.7 else "- " + self.sentence(topic)))
        if rng.random() < 0.15:
            lines += [">", *("> " + row for row in self.table(topic).split("\n"))]
        return "\n".join(lines)

    def steps(self, topic: _Topic) -> str:
        """Numbered steps; a step may hold a fenced command or sub-points after a blank line, or an embed."""
        rng = self.rng
        lines: list[str] = []
        for number in range(1, rng.randint(2, 5) + 1):
            pad = " " * len(f"{number}. ")
            lines.append(f"{number}. {self.linked_sentence(topic)}")
            roll = rng.random()
            if roll < 0.3:
                lines += ["", f"{pad}```sh", pad + " ".join(self.words(rng.randint(2, 5), topic)), f"{pad}```", ""]
            elif roll < 0.5:
                lines += [f"{pad}![[{self.title(topic)}.png]]", ""]
            elif roll < 0.7:
                lines += ["", f"{pad}- {self.sentence(topic)}", f"{pad}- {self.sentence(topic)}", ""]
        return "\n".join(lines).rstrip("\n")

    def table(self, topic: _Topic) -> str:
        rng = self.rng
        columns = rng.randint(2, 4)
        head = [self.title(topic) for _ in range(columns)]
        rows = ["| " + " | ".join(head) + " |", "|" + "|".join(rng.choice(("---", ":--", "--:")) for _ in head) + "|"]
        for _ in range(rng.randint(2, 8)):
            cells = [self.link(topic).replace("|", "\\|") if rng.random() < 0.2 else " ".join(self.words(rng.randint(1, 4), topic)) for _ in head]
            rows.append("| " + " | ".join(cells) + " |")
        return "\n".join(rows)

    def tasks(self, topic: _Topic) -> str:
        rng = self.rng
        items = []
        for _ in range(rng.randint(2, 6)):
            box = rng.choice(("[ ]", "[ ]", "[x]", "[/]", "[-]"))
            due = _FIRST_DAY + timedelta(days=rng.randrange(_DAYS))
            dates = f" 📅 {due.isoformat()}" if rng.random() < 0.6 else ""
            items.append(f"- {box} {' '.join(self.words(rng.randint(3, 9), topic))} {rng.choice(_PRIORITIES)}{dates}".rstrip())
        return "\n".join(items)

    def front_matter(self, title: str, topic: _Topic) -> str:
        rng = self.rng
        day = _FIRST_DAY + timedelta(days=rng.randrange(_DAYS))
        tags = ", ".join(json.dumps(t) for t in self.tags(topic))
        lines = ["---", f"title: {json.dumps(title)}", f"tags: [{tags}]", f"created: {day.isoformat()}"]
        if rng.random() < 0.6:
            lines.append(f"status: {rng.choice(_STATUSES)}")
        if rng.random() < 0.4:
            lines.append(f"rating: {rng.randint(1, 5)}")
        if rng.random() < 0.3 and self.titles:
            lines.append(f'project: "[[{rng.choice(self.titles)}]]"')
        if rng.random() < 0.3:
            lines.append("aliases:\n  - " + json.dumps(self.title(topic)))
        lines.append(f"doc_type: {rng.choice(_DOC_TYPES)}")
        return "\n".join([*lines, "---", ""])

    def note(self, topic: _Topic) -> tuple[str, str]:
        """Return (title, full text) for one Obsidian-shaped note in ``topic``."""
        rng = self.rng
        title = self.title(topic)
        front = self.front_matter(title, topic)
        target = min(_SIZE_CAP, int(rng.lognormvariate(math.log(_SIZE_MEDIAN), _SIZE_SIGMA)))
        blocks = [f"# {title}"] if rng.random() < 0.5 else []
        if rng.random() < 0.3:
            blocks.append(f"<!-- {' '.join(self.words(4, topic))} -->")
        size = len(front)
        while size < target:
            block = self.block(topic)
            blocks.append(block)
            size += len(block) + 2
        self.titles.append(title)
        return title, front + "\n" + "\n\n".join(blocks) + "\n"

    def block(self, topic: _Topic) -> str:
        roll = self.rng.random()
        if roll < 0.14:
            return "#" * self.rng.randint(2, 3) + " " + self.title(topic)
        if roll < 0.24:
            return self.bullet_list(topic)
        if roll < 0.33:
            if self.rng.random() < 0.3:
                return self.paragraph(topic) + "\n" + self.callout(topic)  # a callout right under its paragraph
            return self.callout(topic)
        if roll < 0.38:
            return self.table(topic)
        if roll < 0.45:
            return self.tasks(topic)
        if roll < 0.48:
            return self.code_block(topic)
        if roll < 0.51:
            return f"![[{self.rng.choice(self.titles) if self.titles else 'image'}.png]]"
        if roll < 0.56:
            return self.steps(topic)
        return self.paragraph(topic)
