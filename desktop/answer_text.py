"""Text the Ask pane shows and copies, built by small pure functions so tests can check it without widgets.

The Ask panel (`desktop.panels.ask`) only places these strings: what its status line says
about an answer, who wrote it, why there is none, and which model will answer are all here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import replace

from core.answer import AskResponse, Quote, Source
from core.answer.extractive import LABEL as EXTRACTIVE_LABEL
from core.answer.pipeline import EXTRACTIVE
from core.base.confidentiality import is_restricted
from core.base.models import Hit, cited_path
from core.providers.llm import default_llm_registry
from core.vault.display_text import display_text, passage
from desktop.formatting import heading_trail
from desktop.settings import Settings

_GROUP = re.compile(r"\[(\s*\d+(?:\s*[,;]\s*\d+)+\s*)\]")
#: One citation as the pane shows it, after `split_markers`.
MARKER = re.compile(r"\[(\d+)\]")

#: The title of an answer the notes do not support (the pane says so instead of guessing).
ABSTAIN_TITLE = "Your notes don't say"

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
    if any(is_restricted(h.confidentiality) for h in source.hits):
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
        shown = "  \n".join(display_text(source.text).splitlines())  # as read, one line a block
        return f"{head}\n\n{shown}\n"
    parts = [head]
    for q in mine:
        section = heading_trail(q.heading_path, source.title)
        label = f"_{section}_\n\n" if section and section != trail else ""
        if q.kind == "code":
            fence = "````" if "```" in q.text else "```"
            intro = f"{passage(q.intro)}\n\n" if q.intro else ""
            parts.append(f"{label}{intro}{fence}{q.language}\n{q.text}\n{fence}")
        else:
            parts.append(f"{label}{passage(q.text, row=q.kind == 'row')}")  # as read: no link, callout or table syntax
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


def answered_by(response: AskResponse) -> str:
    """`provider · model` of a written answer; empty for an extractive one (no model wrote it)."""
    if is_extractive(response):
        return ""
    return f"{response.provider} · {response.model}" if response.model else response.provider


def status_text(response: AskResponse, *, stopped: bool) -> str:
    """The status line (rich text) under the question once an answer is in; `stopped`: the user pressed Stop."""
    if stopped:
        return "<b>Stopped</b> — the answer below is incomplete."
    if response.incomplete:
        return "<b>The answer broke off</b> — what arrived is below, incomplete."
    if is_extractive(response):
        # One line where it can: the Ask pane's height goes to the answer (Settings › Language model is named
        # by the "Answers: extractive (offline)" label's tooltip beside the question).
        return "<b>Extractive answer</b> — passages of your notes, quoted as written (no language model is set)."
    if response.unverified:
        return (
            "<b>Quoted from your notes</b> — the model's answer cited none of the sources, so these passages of your "
            "notes are shown instead; its text is folded away below as unverified."
        )
    if response.error:
        return "<b>The model did not answer.</b>"
    first = f", first words after {response.first_token_ms / 1000:.1f} s" if response.first_token_ms else ""
    return f"Answered by {html.escape(answered_by(response))}{first}."


def abstain_text(response: AskResponse, where: str) -> str:
    """Said under `ABSTAIN_TITLE`: nothing in `where` answers, then the closest notes or what to try instead."""
    return f"No passage in {where} answers the question." + (
        " The closest notes, which may be related (click one to open it):" if response.related else " Try other words, a wider scope, or a plain search."
    )


def closest_labels(response: AskResponse) -> list[str]:
    """The closest notes of an abstention, one link label each: "Title (folder/note.md)"."""
    return [f"{r.title or r.rel_path} ({r.rel_path})" for r in response.related]


def model_label(settings: Settings) -> tuple[str, str]:
    """Who will write the answers, and its tooltip (where passages are sent), from the Language model settings."""
    info = default_llm_registry().get(settings.llm_provider)
    if info is None:
        return "Answers: extractive (offline)", "No language model is configured: answers quote your notes. Settings › Language model"
    allowed = "" if settings.allow_remote_llm or not info.remote else " (not allowed yet)"
    routed = " · folders routed" if settings.route_folders else ""
    tip = f"Passages are sent to {settings.llm_base_url or info.default_base_url}"
    if routed:
        tip += ". The model first picks the folders to search (the Debug tab shows its choice)"
    return f"Answers: {info.id} · {settings.llm_model or info.default_model}{allowed}{routed}", tip
