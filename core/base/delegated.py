"""A read-only attribute that reads through to a part its owner holds, typed.

Classes made of parts (`VaultIndex` holds its `disk`, the app's controller its
`queries`) keep their public attributes: `keyword: Delegated[KeywordIndex] =
Delegated("disk")` reads `self.disk.keyword`, and type checkers see a
`KeywordIndex`, not `Any` as a `property(lambda ...)` would give.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Delegated(Generic[T]):
    """`owner.<name>` is `owner.<part>.<name>` (or `<attribute>` when given)."""

    def __init__(self, part: str, attribute: str | None = None, *, doc: str | None = None) -> None:
        self.part = part
        self.attribute = attribute or ""
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.attribute = self.attribute or name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Delegated[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.part), self.attribute)

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(f"{self.attribute} is read-only here: it belongs to {self.part}")
