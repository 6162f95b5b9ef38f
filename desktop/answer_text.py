"""Text the Ask pane shows and copies, built by small pure functions so tests can check it without widgets."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from core.answer import AskResponse, Quote, Source
from core.answer.extractive import LABEL as EXTRACTIVE_LABEL
from core.answer.pipeline import EXTRACTIVE
from core.base.models import Hit, cited_path
from core.vault.links import labelled_text
from desktop.formatting import heading_trail

_GROUP = re.compile(r"\[(\s*\d+(?:\s*[,;]\s*\d+)+\s*)\]")
#: One citation as the pane shows it, after `split_markers`.
MARKER = re.compile(r"\[(\d+)\]")

#: Guardrail flags (core.search.guardrails) in words; the model is told to ignore such text.
FLAG_TEXT = {
    "policy_override_attempt": "tries to override the model's instructions",
    "tool_call_attempt": "tries to make the model run something",
    "instruction_like": "reads like instructions to a model",
}


def split_markers(text: str) -> str:
    """`[1, 2]` becomes `[1][2]`, so every number is its own clickable chip."""
    return _GROUP.sub(lambda m: "".join(f"[{n.strip()}]" for n in re.split(r"[,;]", m.group(1))), text)


def is_extractive(response: AskResponse) -> bool:
    return response.provider == EXTRACTIVE


def answer_body(text: str) -> str:
    """The answer without the extractive label line (the pane shows that label on its own)."""
    if text.startswith(EXTRACTIVE_LABEL):
        return text[len(EXTRACTIVE_LABEL) :].lstrip("\n")
    return text


def flag_text(flag: str) -> str:
    return FLAG_TEXT.get(flag, flag.replace("_", " "))


def source_line(source: Source) -> str:
    """`[n] title › heading — rel_path`, then the guardrail flags of its chunks."""
    trail = heading_trail(source.heading_path, source.title)
    where = f" › {trail}" if trail else ""
    flags = "".join(f"  ⚠ {flag_text(f)}" for f in source.flags)
    if any(h.confidentiality == "restricted" for h in source.hits):
        flags += "  🔒 restricted"
    return f"[{source.number}] {source.title}{where} — {cited_path(source.rel_path, source.page, source.last_page)}{flags}"


def preview_hit(source: Source) -> Hit:
    """A hit covering the whole source (adjacent chunks merged), for the Preview tab to show and highlight."""
    first = source.hits[0]
    return replace(first, start_byte=source.start_byte, end_byte=source.end_byte)


def ranks_line(hit: Hit, mode: str = "hybrid") -> str:
    """Where a chunk stood in each retrieval list, as the Why tab words it; `mode` is the search mode that ran."""
    if hit.bm25:
        keyword = f"keyword rank {hit.bm25.rank}, score {hit.bm25.score:.3f}"
    else:
        keyword = "keyword: not searched (semantic mode)" if mode == "semantic" else "not a keyword candidate"
    if hit.vector:
        vector = f"vector rank {hit.vector.rank}, cosine {hit.vector.score:.4f}"
    else:
        vector = "vector: not searched (keyword mode)" if mode == "keyword" else "not a vector candidate"
    return f"{keyword}; {vector}"


def context_text(messages: Sequence[dict[str, str]]) -> str:
    """The messages exactly as sent, one block per message under its role."""
    return "\n\n".join(f"── {m.get('role', '?')} ──\n{m.get('content', '')}" for m in messages)


def passage_markdown(source: Source, quotes: Sequence[Quote] = ()) -> str:
    """A cited passage for the side pane: its place in the notes, then its text (code fenced as written)."""
    trail = heading_trail(source.heading_path, source.title)
    head = f"**[{source.number}] {source.title}**" + (f" › {trail}" if trail else "") + f"  \n`{source.vault}/{source.rel_path}`"
    mine = [q for q in quotes if q.number == source.number]
    if not mine:
        return f"{head}\n\n{source.text.strip()}\n"
    parts = [head]
    for q in mine:
        section = heading_trail(q.heading_path, source.title)
        label = f"_{section}_\n\n" if section and section != trail else ""
        if q.kind == "code":
            fence = "````" if "```" in q.text else "```"
            intro = f"{q.intro}\n\n" if q.intro else ""
            parts.append(f"{label}{intro}{fence}{q.language}\n{q.text}\n{fence}")
        else:
            parts.append(f"{label}{labelled_text(q.text)}")  # as read: link labels, not link syntax
    return "\n\n".join(parts) + "\n"


def answer_markdown(response: AskResponse) -> str:
    """The question, the answer and its sources as markdown, for the clipboard."""
    lines = [f"**Q:** {response.question}", ""]
    if response.standalone_question:
        lines += [f"_Searched for: {response.standalone_question}_", ""]
    if response.abstained:
        lines.append("_My notes don't say._")
        if response.related:
            lines += ["", "Closest notes: " + "; ".join(f"`{r.vault}/{r.rel_path}`" for r in response.related)]
    else:
        lines.append(answer_body(response.answer).strip() or "_(no answer)_")
        if response.incomplete:
            lines += ["", "_(incomplete: the answer was cut off)_"]
    if response.unverified:
        summary = "<details><summary>The model's unverified answer (it cited none of the sources)</summary>"
        lines += ["", summary, "", response.unverified.strip(), "", "</details>"]
    if response.sources and not response.abstained:
        lines += ["", "**Sources**", ""]
        for s in response.sources:
            trail = heading_trail(s.heading_path, s.title)
            lines.append(f"{s.number}. {s.title}" + (f" › {trail}" if trail else "") + f" — `{s.vault}/{cited_path(s.rel_path, s.page, s.last_page)}`")
    by = "extractive (no language model)" if is_extractive(response) else f"{response.provider} · {response.model or 'default model'}"
    lines += ["", f"_Answered by {by} with Cairn._"]
    return "\n".join(lines)


def conversation_markdown(turns: Sequence[AskResponse]) -> str:
    """A whole conversation, turn after turn, for the clipboard or a file the user picks."""
    return "\n\n---\n\n".join(answer_markdown(t) for t in turns) + "\n"
