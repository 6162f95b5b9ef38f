"""Secret masking and prompt-injection heuristics for note text.

Notes hold whatever their owner pasted into them: API keys, passwords,
instructions aimed at a model. Snippets and everything sent to a language
model pass through `mask_secrets`; chunks that look like they try to steer a
model get flags and a risk score that lowers their rank and shows in the UI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MASK = "[REDACTED]"

_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private_key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)")),
    ("ssh_private_key", re.compile(r"-----BEGIN OPENSSH PRIVATE KEY-----[\s\S]*?(?:-----END OPENSSH PRIVATE KEY-----|\Z)")),
    ("aws_key_id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    ("bearer_token", re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}")),
    ("api_key", re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,}-)*[A-Za-z0-9_-]{16,}\b")),
    ("api_key", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|glpat|xox[abpr])[-_][A-Za-z0-9_-]{16,}\b")),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "assignment",
        re.compile(
            r"(?i)\b(\w*(?:pass(?:word|wd)?|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token|client[_-]?secret)\w*\s*[:=]\s*)"
            r"(['\"]?)([^\s'\"]{4,})\2"
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Masked:
    text: str
    kinds: tuple[str, ...]  # what was masked, e.g. ("api_key", "assignment")


def mask_secrets(text: str) -> Masked:
    kinds: list[str] = []
    for kind, pattern in _SECRET_PATTERNS:

        def repl(m: re.Match[str], kind: str = kind) -> str:
            kinds.append(kind)
            if kind == "assignment":
                return f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}"
            if kind == "bearer_token":
                return f"{m.group(1)} {MASK}"
            return MASK

        text = pattern.sub(repl, text)
    return Masked(text, tuple(dict.fromkeys(kinds)))


_INJECTION_RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        "policy_override_attempt",
        0.6,
        re.compile(
            r"(?i)\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|all|earlier|system)\b[^.\n]{0,30}"
            r"\b(instructions?|prompts?|rules?|messages?|guidelines?)\b"
            r"|\byou are no longer\b|\bnew (system )?instructions?\b|\bjailbreak\b|\bdeveloper mode\b"
        ),
    ),
    (
        "tool_call_attempt",
        0.5,
        re.compile(
            r"(?i)<\s*/?\s*(tool_call|function_call|tool|system)\s*>|\"(tool|function)_call\"\s*:|\bcall the (tool|function)\b"
            r"|\b(execute|run) (this|the following) (command|code|shell)\b|\bcurl\s+https?://\S+\s*\|\s*(sh|bash)\b"
        ),
    ),
    (
        "instruction_like",
        0.25,
        re.compile(
            r"(?i)\b(as an ai|language model|assistant)\b[^.\n]{0,40}\b(must|should|always|never)\b"
            r"|\b(respond|reply|answer) only with\b|\bdo not (tell|reveal|mention)\b[^.\n]{0,30}\b(user|anyone)\b"
            r"|^\s*(system|assistant)\s*:"
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Risk:
    flags: tuple[str, ...]
    score: float  # 0..1


def injection_risk(text: str) -> Risk:
    """Heuristic flags; the score adds up the rules that fired, capped at 1."""
    flags: list[str] = []
    score = 0.0
    for flag, weight, pattern in _INJECTION_RULES:
        if pattern.search(text):
            flags.append(flag)
            score += weight
    return Risk(tuple(flags), min(1.0, score))
