"""Ask about tasks: "what is open for project X?" answered from the task lines themselves.

Passages found by a search rarely hold every open task of a project, and a task list is
exactly what the index already has (`core.search.tasks`). A question that asks what is
open, left or to do is answered with the matching open tasks, soonest due first, each
quoted and cited to its line. A task matches when every word of the question's subject
(the words left after the question's own: "what", "open", "project"...) appears in the
task, its heading, its note's title or path, or its note's property values — so
`project: "[[Launch]]"` in a note's front matter makes its tasks Launch's tasks. With no
such task the question goes through the usual pipeline.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.answer.models import AskRequest, AskResponse, Quote, Reference
from core.base.confidentiality import is_restricted
from core.index.property_terms import decode_term
from core.search.query import STOP_WORDS
from core.search.tasks import TaskHit

if TYPE_CHECKING:
    from core.engine import Engine
    from core.index.manifest import FileRecord

# "open tasks", "todos", "what is (still) open / left / pending ..." — not "how do I open settings",
# nor a question that merely mentions tasks ("how do I filter tasks by due date").
_OPEN = r"(?:open|left|pending|outstanding|remaining|unfinished|undone|not done)"
_ASKS_TASKS = re.compile(
    rf"\b(?:open|pending|outstanding|remaining|unfinished|undone)\s+(?:tasks?|to-?dos?|items?)\b"
    rf"|\bto-?dos?\b"
    rf"|\bwhat(?:'s| is| are)?\s+(?:still\s+)?{_OPEN}\b"
    rf"|\btasks?\s+(?:are\s+|is\s+)?(?:still\s+)?{_OPEN}\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    "open opened outstanding pending remaining left todo todos to-do to-dos unfinished undone not done task tasks still for on in project projects "
    "list show tell give items item anything everything what's".split()
)
MAX_TASKS = 20


@dataclass(frozen=True, slots=True)
class _Found:
    hit: TaskHit
    start: int
    end: int
    ordinal: int


def task_subject(question: str) -> tuple[str, ...] | None:
    """The subject words of a question about open tasks; None when it is not one."""
    if not _ASKS_TASKS.search(question):
        return None
    words = [w.lower() for w in re.findall(r"[\w\-]+(?:'\w+)?", question)]
    subject = tuple(w for w in words if w not in STOP_WORDS and w not in _QUESTION_WORDS)
    return subject or None


def _in_scope(rel: str, req: AskRequest) -> bool:
    """The note lies in the folders and under the path prefixes the question was asked of."""
    if req.folders and not any(rel.startswith(f.strip("/") + "/") for f in req.folders):
        return False
    return not req.path_prefixes or rel.startswith(req.path_prefixes)


def answer_tasks(engine: Engine, req: AskRequest, provider: str, model: str | None = None) -> AskResponse | None:
    """The open tasks the question asks about, cited to their lines; None when none match.

    A follow-up ("and for the website?") is not rewritten here: with history, the usual pipeline answers.
    """
    t0 = time.perf_counter()
    subject = task_subject(req.question) if not req.history else None
    if subject is None:
        return None
    found: list[_Found] = []
    for vc in engine.vaults:
        if req.vaults and vc.name not in req.vaults:
            continue
        vi = engine.index_for(vc.name)
        if not vi.is_built:
            continue
        for rel, rec in vi.files.items():
            if not rec.tasks or (is_restricted(rec.confidentiality) and not req.allow_restricted):
                continue
            if not _in_scope(rel, req):
                continue
            found.extend(_matching(vc.name, Path(vc.root), rel, rec, subject))
    if not found:
        return None
    found.sort(key=lambda f: (f.hit.task.due or "9999", f.hit.vault, f.hit.rel_path, f.hit.task.line))
    base = AskResponse(req.question, "", (), False, None, (), provider, model, debug={})
    answered = _response(base, found[:MAX_TASKS], len(found), subject)
    return replace(answered, timings_ms={"total": round((time.perf_counter() - t0) * 1000, 2)})


def _matching(vault: str, root: Path, rel: str, rec: FileRecord, subject: tuple[str, ...]) -> list[_Found]:
    values = " ".join(d[2] for t in rec.props if (d := decode_term(t)) is not None)
    note_text = f"{rec.title} {rel} {values}".lower()
    tasks = [t for t in rec.tasks if t.status.is_open and all(w in f"{t.text} {t.heading} {note_text}".lower() for w in subject)]
    if not tasks:
        return []
    try:
        raw = (root / rel).read_bytes()  # read only: the task lines' byte ranges, for the citations
    except OSError:
        return []
    starts = [0] + [m.end() for m in re.finditer(rb"\n", raw)]
    out = []
    for t in tasks:
        if t.line - 1 >= len(starts):
            continue
        start = starts[t.line - 1]
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        ordinal = next((c.ordinal for c in rec.chunks if c.start_byte <= start < c.end_byte), rec.chunks[0].ordinal if rec.chunks else 0)
        out.append(_Found(TaskHit(vault, rel, rec.title, t), start, end, ordinal))
    return out


def _response(base: AskResponse, found: list[_Found], total: int, subject: tuple[str, ...]) -> AskResponse:
    refs: list[Reference] = []
    quotes: list[Quote] = []
    lines = [f"Open tasks for {' '.join(subject)} ({total}):" if total <= len(found) else f"Open tasks for {' '.join(subject)} ({len(found)} of {total}):"]
    for n, f in enumerate(found, 1):  # one reference per task: each cites its own line
        refs.append(Reference(n, f.hit.vault, f.hit.rel_path, f.hit.task.heading, f.ordinal, f.start, f.end, f.hit.title))
        due = f" (due {f.hit.task.due})" if f.hit.task.due else ""
        lines.append(f"- {f.hit.task.text}{due} [{n}]")
        quotes.append(Quote(n, f.hit.task.text, "item", f.hit.rel_path, f.hit.task.heading, f.ordinal, f.start, f.end))
    debug = {**base.debug, "tasks": [{"ref": f"{f.hit.vault}/{f.hit.rel_path}:{f.hit.task.line}", "due": f.hit.task.due} for f in found]}
    return replace(base, answer="\n".join(lines), references=tuple(refs), quotes=tuple(quotes), debug=debug)
