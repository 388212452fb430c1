"""Answers remembered per argument objects, by identity, for calls on a solve's hot path.

Frozen settings are hashable, so ``functools.lru_cache`` remembers what is made from them; but
a hit there hashes and compares every field each call (microseconds a single solve feels).
Callers pass the same settings objects again and again, so looking them up by ``id`` first is
enough. Each entry keeps its objects alive, so no other object takes their id while it stands;
past ``size`` entries the table starts again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class IdentityMemo(Generic[T]):
    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._table: dict[tuple, tuple[tuple, T]] = {}

    def get(self, objects: tuple, make: Callable[[], T], extra: Hashable = None) -> T:
        """What ``make()`` gave for these very ``objects`` (and equal ``extra``), made once."""
        key = (*map(id, objects), extra)
        kept = self._table.get(key)
        if kept is not None and all(a is b for a, b in zip(kept[0], objects, strict=True)):
            return kept[1]
        value = make()
        if len(self._table) >= self.size:
            self._table.clear()
        self._table[key] = (objects, value)
        return value
