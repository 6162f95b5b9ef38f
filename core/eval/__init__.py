"""Retrieval evaluation: metrics, golden query files, BEIR datasets and reports.

Everything here is pure or file-local so `cairn eval`, the benchmark scripts and
the tests can share one definition of "how good is the ranking".
"""

from __future__ import annotations
