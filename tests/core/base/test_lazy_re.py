"""A pattern compiled on first use answers as `re.compile` would, and costs nothing until then."""

from __future__ import annotations

import re

from core.base.lazy_re import LazyPattern


def test_nothing_is_compiled_until_the_pattern_is_used() -> None:
    pattern = LazyPattern(r"(\w+)@(\w+)")
    assert pattern._compiled is None
    assert pattern.search("mail me@home now") is not None
    assert pattern._compiled is not None and pattern.compiled is pattern.compiled


def test_each_method_answers_as_the_compiled_pattern() -> None:
    source, flags = r"^(#+)\s*(.*)$", re.MULTILINE
    lazy, real = LazyPattern(source, flags), re.compile(source, flags)
    text = "# One\nbody\n## Two\n"
    assert lazy.pattern == source
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub(r"\2", text) == real.sub(r"\2", text)
    assert lazy.sub(lambda m: m.group(2).upper(), text) == real.sub(lambda m: m.group(2).upper(), text)
    assert lazy.match("body") is None and real.match("body") is None
    found, expected = lazy.match(text), real.match(text)
    assert found is not None and expected is not None and found.span() == expected.span()
