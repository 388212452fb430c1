"""The two memos the hot paths keep answers in: by value (``BoundedMemo``) and by identity
(``IdentityMemo``)."""

from __future__ import annotations

import numpy as np

from quat_ik_addon.solver.bounded_memo import BoundedMemo
from quat_ik_addon.solver.identity_memo import IdentityMemo


def test_a_bounded_memo_makes_each_key_once_and_starts_again_when_full():
    made = []

    def make(key):
        made.append(key)
        return f"value of {key}"

    memo = BoundedMemo(3)
    for key in ("a", "b", "a", "c", "b"):
        assert memo.get(key, lambda key=key: make(key)) == f"value of {key}"
    assert made == ["a", "b", "c"]
    assert len(memo) == 3
    memo.get("d", lambda: make("d"))  # full: the table starts again with "d"
    assert len(memo) == 1
    memo.get("a", lambda: make("a"))
    assert made == ["a", "b", "c", "d", "a"]
    memo.clear()
    assert len(memo) == 0


def test_a_bounded_memo_keeps_nothing_when_making_fails():
    memo = BoundedMemo(4)

    def fail():
        raise ValueError("bad settings")

    for _ in range(2):
        try:
            memo.get("bad", fail)
        except ValueError:
            pass
    assert len(memo) == 0
    assert memo.get("bad", lambda: 1) == 1


def test_an_identity_memo_answers_the_same_objects_only():
    memo = IdentityMemo(4)
    first, equal = np.zeros(3), np.zeros(3)
    calls = []
    assert memo.get((first,), lambda: calls.append("first") or 1) == 1
    assert memo.get((first,), lambda: calls.append("again") or 2) == 1
    assert memo.get((equal,), lambda: calls.append("equal") or 3) == 3  # equal values, another object
    assert memo.get((first,), lambda: calls.append("extra") or 4, extra="other") == 4
    assert calls == ["first", "equal", "extra"]
