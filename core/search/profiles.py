"""Search profiles: named sets of fusion weights, shown in every score breakdown."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from core.base.models import Fusion, SearchMode, SearchSettings


@dataclass(frozen=True, slots=True)
class Profile:
    """A named set of ranking weights (`--profile`), as `docs/ranking.md` describes them."""

    name: str
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    keyword_share: float = 0.5  # hybrid: the keyword list's share of the fused score (the rest is meaning)
    freshness_weight: float = 0.0  # the largest freshness boost, in fused score units
    half_life_days: float = 180.0
    description: str = ""

    def freshness_boost(self, date: str | None, today: dt.date) -> float:
        """Exponential decay by the note's age; notes without a date get no boost."""
        if not self.freshness_weight or not date:
            return 0.0
        try:
            day = dt.date.fromisoformat(date)
        except ValueError:
            return 0.0
        age = max(0, (today - day).days)
        return self.freshness_weight * math.exp(-math.log(2) * age / self.half_life_days)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("default", description="keyword and meaning count alike"),
        Profile("recent", freshness_weight=0.25, half_life_days=90, description="prefers recently dated notes"),
        Profile("keyword-heavy", keyword_weight=1.5, vector_weight=0.5, keyword_share=0.75, description="exact words matter most"),
    )
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None


def fusion_text(settings: SearchSettings, mode: str) -> str:
    """How a search merged its lists, in the user's words (the Why tab and `--explain` show it)."""
    if mode != SearchMode.HYBRID:
        return "one list, in its own order"
    if settings.fusion == Fusion.RRF:
        return f"reciprocal rank fusion (k = {settings.rrf_k})"
    share = keyword_share(settings)
    return f"score blend: keyword {share:.0%}, meaning {1 - share:.0%}"


def keyword_share(settings: SearchSettings) -> float:
    """The blend's keyword share: the user's, else the profile's."""
    if settings.keyword_share is not None:
        return min(1.0, max(0.0, settings.keyword_share))
    return PROFILES[settings.profile].keyword_share if settings.profile in PROFILES else 0.5
