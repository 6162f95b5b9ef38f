"""The search filters applied to manifest records, for the vector list.

The keyword list gets the same filters as a Whoosh query (`keyword_index.filter_query`);
both must agree, which the tests check.
"""

from __future__ import annotations

from core.base.confidentiality import is_restricted
from core.base.models import SearchFilters
from core.index.manifest import FileRecord
from core.index.property_terms import terms_match


def record_matches(rel_path: str, rec: FileRecord, filters: SearchFilters) -> bool:
    if is_restricted(rec.confidentiality) and not filters.allow_restricted:
        return False
    if filters.folders:
        lowered = rel_path.lower()
        if not any(lowered.startswith(f.strip("/").lower() + "/") for f in filters.folders):
            return False
    if filters.path_prefixes and not rel_path.startswith(filters.path_prefixes):
        return False
    if filters.tags and not _tags_match(rec, filters):
        return False
    if filters.doc_types and (rec.doc_type or "") not in filters.doc_types:
        return False
    if not _dated_within(rec, filters):
        return False
    if filters.paths is not None and rel_path not in filters.paths:
        return False
    if filters.where:
        terms = frozenset(rec.props)
        return all(terms_match(terms, f) for f in filters.where)
    return True


def _tags_match(rec: FileRecord, filters: SearchFilters) -> bool:
    tags = set(rec.tags)
    wanted = [t.lower() for t in filters.tags]
    return all(t in tags for t in wanted) if filters.tag_mode == "all" else any(t in tags for t in wanted)


def _dated_within(rec: FileRecord, filters: SearchFilters) -> bool:
    """No date range, or the note is dated inside it (an undated note is outside any range)."""
    if not (filters.after or filters.before):
        return True
    if not rec.date:
        return False
    return not (filters.after and rec.date < filters.after) and not (filters.before and rec.date > filters.before)


def is_active(filters: SearchFilters) -> bool:
    return bool(
        filters.folders or filters.path_prefixes or filters.tags or filters.doc_types or filters.after or filters.before or filters.where
    ) or filters.paths is not None
