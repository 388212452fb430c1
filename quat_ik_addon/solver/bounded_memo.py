"""Values made once per key and kept up to a bound, for what Live and Per Frame rebuild on every
update from the same inputs (solver chains, bodies, limits, target turns).

Past ``size`` entries the table starts again rather than evicting the least recently used:
an update's working set is a few entries, so a full table means the inputs moved on (a long
bake, many rigs), and the bookkeeping of an LRU would cost more on every hit than a rare
rebuild does.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class BoundedMemo(Generic[T]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._table: dict[Hashable, T] = {}

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make()`` gave for an equal ``key``, made now when it is not kept."""
        found = self._table.get(key)
        if found is None:
            found = make()
            if len(self._table) >= self.size:
                self._table.clear()
            self._table[key] = found
        return found

    def clear(self) -> None:
        self._table.clear()

    def __len__(self) -> int:
        return len(self._table)
