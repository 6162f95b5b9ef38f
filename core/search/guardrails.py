"""Secret masking and prompt-injection heuristics for note text.

Notes hold whatever their owner pasted into them: API keys, passwords,
instructions aimed at a model. Snippets and everything sent to a language
model pass through `mask_secrets`; chunks that look like they try to steer a
model get flags and a risk score that lowers their rank and shows in the UI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.base.lazy_re import LazyPattern

MASK = "[REDACTED]"

_KEY_BLOCK = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_KEY_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
# The middle of a key block cut by chunk boundaries: the chunk opens with base64 lines (40+
# characters, nothing else on them) and holds neither BEGIN nor END. The structure decides,
# not the alphabet: a key body may hold no digit, or no capital, on a line.
_KEY_CONTINUATION = re.compile(r"\A\s*(?:[ \t>]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*(?:\r?\n|\Z))+(?:[ \t>]*[A-Za-z0-9+/]{1,39}={0,2}[ \t]*(?:\r?\n|\Z))?")
# Well-known token formats, after the gitleaks and detect-secrets rule sets: a fixed prefix
# and a body of the documented length, so ordinary words never match.
# Each with literal text it cannot match without (any one of them; none: always tried): most
# snippets hold none, so their pattern is neither compiled nor run (core.base.lazy_re). A `(?i)`
# pattern's are in lower case, sought in the text folded as `re` compares letters (`_fold`).
_SECRET_PATTERNS: tuple[tuple[str, tuple[str, ...], LazyPattern], ...] = (
    # A whole key block; one cut by a chunk boundary is masked to the chunk's end, and the tail
    # of one (an END line without its BEGIN) from the chunk's start.
    ("private_key", ("PRIVATE KEY",), LazyPattern(_KEY_BLOCK + r"[\s\S]*?(?:" + _KEY_END + r"|\Z)")),
    ("private_key", ("PRIVATE KEY",), LazyPattern(r"\A[\s\S]*?" + _KEY_END)),
    ("private_key", ("PuTTY-User-Key-File-",), LazyPattern(r"(?m)^PuTTY-User-Key-File-\d:[\s\S]*?(?:^Private-MAC:.*$|\Z)")),
    (
        "aws_key_id",
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "A3T"),
        LazyPattern(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ),
    ("jwt", ("eyJ",), LazyPattern(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    ("bearer_token", ("bearer",), LazyPattern(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}")),
    ("api_key", ("github_pat_",), LazyPattern(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    (
        "api_key",
        ("ghp", "gho", "ghu", "ghs", "ghr", "glpat", "glptt", "gldt", "xox"),
        LazyPattern(r"\b(?:ghp|gho|ghu|ghs|ghr|glpat|glptt|gldt|xox[abposr])[-_][A-Za-z0-9_-]{16,}\b"),
    ),
    ("api_key", ("_live_", "_test_", "_prod_"), LazyPattern(r"\b(?:sk|pk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}\b")),  # Stripe
    ("api_key", ("sk-", "pk-", "rk-"), LazyPattern(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,}-)*[A-Za-z0-9_-]{16,}\b")),  # OpenAI, Anthropic ...
    ("api_key", ("AIza",), LazyPattern(r"\bAIza[0-9A-Za-z_-]{35}\b")),  # Google API key
    ("api_key", ("GOCSPX-",), LazyPattern(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),  # Google OAuth client secret
    ("api_key", ("ya29.",), LazyPattern(r"\bya29\.[0-9A-Za-z_-]{20,}")),  # Google OAuth access token
    ("api_key", ("https://hooks.slack.com/",), LazyPattern(r"\bhttps://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}")),
    ("api_key", ("SG.",), LazyPattern(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),  # SendGrid
    ("api_key", ("npm_",), LazyPattern(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("api_key", ("pypi-AgE",), LazyPattern(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
    ("api_key", ("hf_",), LazyPattern(r"\bhf_[A-Za-z]{30,}\b")),  # Hugging Face
    ("api_key", ("shpat_", "shpss_", "shpca_", "shppa_"), LazyPattern(r"\b(?:shpat|shpss|shpca|shppa)_[a-fA-F0-9]{32}\b")),  # Shopify
    ("api_key", ("dop_v1_",), LazyPattern(r"\bdop_v1_[a-f0-9]{64}\b")),  # DigitalOcean
    ("api_key", ("SK",), LazyPattern(r"\bSK[0-9a-fA-F]{32}\b")),  # Twilio
    ("api_key", (":AA",), LazyPattern(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b")),  # Telegram bot
    ("api_key", ("accountkey=",), LazyPattern(r"(?i)\bAccountKey=[A-Za-z0-9+/=]{40,}")),  # Azure storage
    ("url_password", ("://",), LazyPattern(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]{3,})(@)")),
    (
        "assignment",
        ("pass", "pwd", "secret", "api", "access", "token"),
        LazyPattern(
            r"(?i)\b(\w*(?:pass(?:word|wd)?|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token|client[_-]?secret)\w*\s*[:=]\s*)"
            r"(['\"]?)([^\s'\"]{4,})\2"
        ),
    ),
    # Bare base64, as in the middle of a long key block whose BEGIN line is in an earlier chunk:
    # two or more lines of 40+ base64 characters, or one of 64+, mixing cases and digits
    # (English words and hex hashes never do all of that).
    (
        "base64_blob",
        (),
        LazyPattern(
            r"(?m)^[ \t>]*(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{40,}={0,2}[ \t]*"
            r"(?:\r?\n[ \t>]*[A-Za-z0-9+/]{4,}={0,2}[ \t]*$)+"
        ),
    ),
    (
        "base64_blob",
        (),
        LazyPattern(
            r"(?<![A-Za-z0-9+/_.-])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*\d)"
            r"[A-Za-z0-9+/]{64,}={0,2}(?![A-Za-z0-9+/_.-])"
        ),
    ),
)


def _looks_random(blob: str) -> bool:
    """Random base64 has about one '/' or '+' in 32 characters; a file path or a URL-encoded
    query ("a+OR+b+OR+c") has many more, and is not a secret."""
    body = "".join(blob.split()).lstrip(">")
    if "\n" not in blob and body.startswith("/") and body.count("/") >= 3:
        return False  # an absolute path such as /Users/me/Library/Caches/...
    return (body.count("/") + body.count("+")) * 8 <= len(body)


def _continues_a_key(lines: str) -> bool:
    """Two base64 lines or one of 64+ (a long identifier alone on a line is neither), looking random."""
    return (lines.count("\n") >= 1 or len(lines) >= 64) and _looks_random(lines)


@dataclass(frozen=True, slots=True)
class Masked:
    """A text with its secrets masked, and which kinds of secret were."""

    text: str
    kinds: tuple[str, ...]  # what was masked, e.g. ("api_key", "assignment")


# Besides the letters `str.lower` gives (İ holds an i, the Kelvin sign is k), `re` matches `(?i)i`
# with a dotless ı and `(?i)s` with a long ſ. No needle has an i before its end: İ lowers to i + a dot.
_FOLD = str.maketrans({"ı": "i", "ſ": "s"})


def _fold(text: str) -> str:
    """`text` as a case-insensitive pattern compares it with ASCII letters."""
    return text.lower().translate(_FOLD)


def mask_secrets(text: str) -> Masked:
    kinds: list[str] = []
    opening = _KEY_CONTINUATION.match(text)
    if opening is not None and _continues_a_key(opening.group(0).strip()):
        kinds.append("private_key")
        text = MASK + ("\n" if opening.group(0).endswith("\n") else "") + text[opening.end() :]
    for kind, needles, pattern in _SECRET_PATTERNS:
        if needles:
            seen = _fold(text) if pattern.pattern.startswith("(?i)") else text
            if not any(needle in seen for needle in needles):
                continue

        def repl(m: re.Match[str], kind: str = kind) -> str:
            if kind == "base64_blob" and not _looks_random(m.group(0)):
                return m.group(0)
            kinds.append(kind)
            if kind == "assignment":
                return f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}"
            if kind == "bearer_token":
                return f"{m.group(1)} {MASK}"
            if kind == "url_password":
                return f"{m.group(1)}{MASK}{m.group(3)}"
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
    """How much a chunk looks like it tries to steer a model, and the rules that said so."""

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
