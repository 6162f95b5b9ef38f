"""Import a library while small stand-ins take the place of modules it imports but Cairn never uses.

Every `cairn search` is a new process, so a library's import-time extras are paid on
every call: Whoosh's and usearch's imports of `urllib.request` (http.client, email,
ssl: 25-95 ms on a 2-core VM) for download helpers no index calls, `cached_property`
(asyncio) and usearch's `tqdm` (its version lookup reads package metadata: ~25 ms)
for progress bars Cairn never asks for. A stand-in is named in `sys.modules` only
during the import: any later `import urllib.request` gets the real module. And only while
no other thread runs: a thread importing the real module meanwhile (httpx imports
`urllib.request` for its proxy settings) would keep the stand-in for good, so with
other threads alive the library is imported as it is, unless each of them is known to
import none of those modules (`imports_no_stand_in`: `cairn index` imports Whoosh while a
thread of its own starts the build's worker process).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

_HARMLESS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def imports_no_stand_in(thread: threading.Thread) -> threading.Thread:
    """Declare that `thread` imports none of the modules a stand-in may take the place of (it
    watches the machine and starts a process, say): while it runs, libraries are still imported
    lean. Returns the thread."""
    _HARMLESS.add(thread)
    return thread


def _others_may_import() -> bool:
    """Whether a thread other than this one, not known to be harmless, is alive."""
    me = threading.current_thread()
    return any(thread is not me and thread not in _HARMLESS for thread in threading.enumerate())


def import_lean(modules: dict[str, dict[str, Callable[..., Any] | type]], *names: str) -> None:
    """Import `names` while `modules` (name -> contents) stand in for imports they never use."""
    if all(name in sys.modules for name in names):
        return
    if _others_may_import():  # another thread could import a stand-in and keep it
        for name in names:
            __import__(name)
        return
    added = []
    for name, contents in modules.items():
        if name not in sys.modules:
            stand_in = types.ModuleType(name, "a stand-in while a library is imported (core.base.lean_import)")
            stand_in.__dict__.update(contents)
            sys.modules[name] = stand_in
            added.append((name, stand_in))
    try:
        for name in names:
            __import__(name)
    finally:
        for name, stand_in in added:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent and getattr(sys.modules.get(parent), child, None) is stand_in:
                delattr(sys.modules[parent], child)


#: What `shutil` imports at its top only to learn whether it exists (`_BZ2_SUPPORTED`, `_LZMA_SUPPORTED`:
#: the archive formats it offers), and the C module that decides whether it does.
_SHUTIL_PROBES = {"bz2": "_bz2", "lzma": "_lzma"}


def import_shutil_lean() -> None:
    """Import `shutil` without loading `bz2` and `lzma`, which it imports only to see that they import.

    Every `cairn` command imports `shutil` (argparse's help formatter, `tempfile`), and with it
    those two modules, their C extensions and liblzma (~1.5 ms of a cold `cairn index` or
    `cairn search`, which make no archive). Where a module's C extension is found, a stand-in
    answers shutil's probe (the same verdict: supported); where it is not, shutil probes the
    real module as always. Any later `import bz2` or `import lzma` gets the real module."""
    if "shutil" in sys.modules:
        return
    from importlib.util import find_spec

    present: dict[str, dict[str, Callable[..., Any] | type]] = {name: {} for name, c_module in _SHUTIL_PROBES.items() if find_spec(c_module) is not None}
    import_lean(present, "shutil")


def on_first_call(module: str, name: str) -> Callable[..., Any]:
    """A stand-in for `module`'s function `name`: imports `module` when first called and hands the call on."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class QuietUntilLogging:
    """A library's module logger (`logging.getLogger(name)`) while nothing has imported `logging`.

    A DEBUG or INFO record can reach no handler before something imports `logging` to configure
    one (unconfigured, only WARNING and above reach `logging.lastResort`), so until then `debug`
    and `info` do nothing; from then on, and for anything else asked of it, it is the real logger.
    Records keep the library's caller as their origin.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._quiet("debug", msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._quiet("info", msg, args, kwargs)

    def _quiet(self, level: str, msg: object, args: tuple[object, ...], kwargs: dict[str, Any]) -> None:
        logging = sys.modules.get("logging")
        if logging is not None:
            kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2  # past this method and `debug`/`info`
            getattr(logging.getLogger(self.name), level)(msg, *args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module("logging").getLogger(self.name), attribute)


def class_once_loaded(module: str, name: str) -> type:
    """A stand-in for `module`'s class `name`, for a library that only tests values against the
    class (`isinstance`) or makes one by calling it.

    No value can be an instance of the class while nothing has imported `module`, so until then
    every check answers no without the module; from then on it is the real check, and a call
    imports the module and makes the real thing. (An identity test, `x is name`, differs: a
    library's use of one must be a path Cairn never takes.)
    """

    class OnceLoaded(type):
        def __instancecheck__(cls, value: object) -> bool:
            real = sys.modules.get(module)
            return real is not None and isinstance(value, getattr(real, name))

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return OnceLoaded(name, (), {"__doc__": f"`{module}.{name}` until it is loaded (core.base.lean_import.class_once_loaded)"})


def module_on_first_use(name: str, **kept: Any) -> dict[str, Any]:
    """A stand-in's contents for a library that imports module `name` at its top and uses it only in
    functions: every attribute (but `kept`, and the dunder names the import system probes for, such as
    `__path__`) is the real module's, which is imported when one is first asked for. Asked for during
    the import itself, the real module is imported then and takes the stand-in's place: the library
    gets it, and nothing is lost but the time."""

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):  # the import system's probes (`__path__` ...)
            raise AttributeError(attribute)
        module = sys.modules.get(name)
        if module is None or module.__dict__.get("__getattr__") is __getattr__:  # the stand-in itself
            sys.modules.pop(name, None)
            module = importlib.import_module(name)
        return getattr(module, attribute)

    return {"__getattr__": __getattr__, **kept}


#: What filelock (4.2) imports at its top and calls only on paths a Cairn lock (`fcntl.flock` on a
#: lock file) never takes: random marker names and jittered back-off of its soft and hard-link
#: locks, breaking a stale soft lock (`secrets`), that break's `renameat2` syscall number by machine
#: (`platform`); its module logger, which a lock's acquire and release tell at DEBUG level
#: (`logging`, see `QuietUntilLogging`); and the `Decimal` a timeout is checked against
#: (`decimal` and its C extension: ~0.8 ms). `tests/core/base/test_lean_import.py` holds these to every use in the
#: installed package.
FILELOCK_STAND_INS: dict[str, dict[str, Any]] = {
    "secrets": {name: on_first_call("secrets", name) for name in ("randbelow", "token_hex")},
    "platform": {"machine": on_first_call("platform", "machine")},
    "logging": {"getLogger": QuietUntilLogging},
    "decimal": module_on_first_use("decimal", Decimal=class_once_loaded("decimal", "Decimal")),
}


def import_filelock_lean() -> None:
    """Import filelock without `logging` (with `traceback`, `string`), `secrets` (with `hmac`, `base64`),
    `platform` and `decimal`: ~5-7 ms of a cold `cairn index`, whose locks need none of them
    (`FILELOCK_STAND_INS`)."""
    import_lean(FILELOCK_STAND_INS, "filelock")


def _catalogs_possible() -> bool:
    """Whether a `gettext` catalog could translate anything here: the real module is loaded (someone may
    have bound a domain), or the default catalog folder (`<prefix>/share/locale`) exists."""
    return "gettext" in sys.modules or os.path.isdir(os.path.join(sys.base_prefix, "share", "locale"))


def _gettext(message: str) -> str:
    """argparse's `gettext`: the message itself where no catalog can exist, else `gettext.gettext`'s answer."""
    if _catalogs_possible():
        return str(importlib.import_module("gettext").gettext(message))
    return message


def _ngettext(singular: str, plural: str, n: int) -> str:
    """argparse's `ngettext`: as `gettext.ngettext` without a catalog, else its answer."""
    if _catalogs_possible():
        return str(importlib.import_module("gettext").ngettext(singular, plural, n))
    return singular if n == 1 else plural


def import_argparse_lean() -> None:
    """Import `argparse` with its two translation functions answering without `gettext` where no message
    catalog can be found (no `<prefix>/share/locale` folder: Python builds from python.org, pyenv, a frozen
    build): building the `cairn` parser asks six times, each a catalog search that first imports `locale`
    (0.76 ms of every cold `cairn index`). Elsewhere, and once anything has imported `gettext`, every
    message goes through the real `gettext` as before."""
    import_lean({"gettext": {"gettext": _gettext, "ngettext": _ngettext}}, "argparse")


class _NodeVisitor:
    """`ast.NodeVisitor`, for a class that subclasses it when its module is imported (`inspect`'s
    `_ClassFinder`, used by `inspect.getsource` for a class): each method is the real one, found when called."""

    def visit(self, node: Any) -> Any:
        return importlib.import_module("ast").NodeVisitor.visit(self, node)

    def generic_visit(self, node: Any) -> Any:
        return importlib.import_module("ast").NodeVisitor.generic_visit(self, node)

    def visit_Constant(self, node: Any) -> Any:  # noqa: N802 - ast's own name
        return importlib.import_module("ast").NodeVisitor.visit_Constant(self, node)


#: `dis.COMPILER_FLAG_NAMES` as CPython 3.11 defines it: `inspect` makes its `CO_*` names of code flags from
#: it at import (`tests/core/base/test_lean_import.py` holds it to the real module's).
COMPILER_FLAG_NAMES_311 = {
    1: "OPTIMIZED", 2: "NEWLOCALS", 4: "VARARGS", 8: "VARKEYWORDS", 16: "NESTED", 32: "GENERATOR", 64: "NOFREE",
    128: "COROUTINE", 256: "ITERABLE_COROUTINE", 512: "ASYNC_GENERATOR",
}  # fmt: skip


def _inspect_stand_ins() -> dict[str, dict[str, Any]]:
    """What `inspect` imports at its top for source code and bytecode (`getsource`, a builtin's `signature`
    from its text, frames' positions): `ast` (the C module's ~120 node types and ast's own unparser),
    `tokenize` and, on CPython 3.11, `dis` (with `opcode`; of it `inspect` reads one table at import).
    `dataclasses` imports `inspect`, and filelock calls `inspect.signature` on Python functions, which
    need none of them."""
    stand_ins = {"ast": module_on_first_use("ast", NodeVisitor=_NodeVisitor), "tokenize": module_on_first_use("tokenize")}
    if sys.version_info[:2] == (3, 11) and sys.implementation.name == "cpython":
        stand_ins["dis"] = module_on_first_use("dis", COMPILER_FLAG_NAMES=dict(COMPILER_FLAG_NAMES_311))
    return stand_ins


INSPECT_STAND_INS: dict[str, dict[str, Any]] = _inspect_stand_ins()
