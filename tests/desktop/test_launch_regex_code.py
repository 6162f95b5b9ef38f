"""The desktop app's entry (`desktop.launch.main`) compiles regular expressions from the table (`core.base.regex_code`)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from re import _compiler  # type: ignore[attr-defined]

import pytest

from core.base import regex_code
from desktop import launch


def test_the_desktop_entry_installs_the_table_and_saves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as in an installed Cairn
    monkeypatch.setattr(_compiler, "compile", _compiler.compile)  # restored after the test
    monkeypatch.setattr(regex_code, "_INSTALLED", [])
    roles: list[str] = []

    def table(role: str = "") -> Path:
        roles.append(role)
        return tmp_path / "regex.marshal"

    monkeypatch.setattr(regex_code, "default_path", table)
    ran: list[bool] = []

    def app_main(args: list[str]) -> int:  # the app, as far as the table sees it: patterns compiled, then a quit
        ran.append(getattr(_compiler.compile, "__self__", None) is regex_code._INSTALLED[0])
        re.purge()
        re.compile(r"only the app \d+")
        return 0

    monkeypatch.setitem(sys.modules, "desktop.app", types.SimpleNamespace(main=app_main))
    try:
        assert launch.main([]) == 0
    finally:
        re.purge()
    assert ran == [True] and (tmp_path / "regex.seen").stat().st_size > 0  # its texts logged at the app's end
    assert roles == ["app"]  # the app's own table, not the commands'
