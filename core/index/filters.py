"""The search filters applied to manifest records, for the vector list.

The keyword list gets the same filters as a Whoosh query (`keyword_index.filter_query`);
both must agree, which the tests check.
"""

from __future__ import annotations

from core.base.confidentiality import is_restricted
from core.base.models import SearchFilters
from core.index.manifest import FileRecord


def record_matches(rel_path: str, rec: FileRecord, filters: SearchFilters) -> bool:
    if is_restricted(rec.confidentiality) and not filters.allow_restricted:
        return False
    if filters.folders:
        lowered = rel_path.lower()
        if not any(lowered.startswith(f.strip("/").lower() + "/") for f in filters.folders):
            return False
    if filters.tags:
        tags = set(rec.tags)
        wanted = [t.lower() for t in filters.tags]
        if filters.tag_mode == "all":
            if not all(t in tags for t in wanted):
                return False
        elif not any(t in tags for t in wanted):
            return False
    if filters.doc_types and (rec.doc_type or "") not in filters.doc_types:
        return False
    if filters.after or filters.before:
        if not rec.date:
            return False
        if filters.after and rec.date < filters.after:
            return False
        if filters.before and rec.date > filters.before:
            return False
    return True


def is_active(filters: SearchFilters) -> bool:
    return bool(filters.folders or filters.tags or filters.doc_types or filters.after or filters.before)
