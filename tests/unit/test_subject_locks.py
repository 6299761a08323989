"""The in-process ``SubjectLock``: ``check_held`` answers for this thread only, at any depth of
re-entry, whatever the order in which subjects' locks are taken and left."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.records import Scope
from carnet.errors import UnlockedWrite
from carnet.services.locks import SubjectLocks

SCOPES = [Scope("assur-nord", f"{n:032x}") for n in range(4)] + [Scope("banque-sud", f"{0:032x}")]


def _held(locks: SubjectLocks, scope: Scope) -> bool:
    try:
        locks.check_held(scope)
    except UnlockedWrite:
        return False
    return True


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(range(len(SCOPES)))), max_size=30),
       st.integers(min_value=1, max_value=8))
def test_held_exactly_while_a_stripe_of_the_subject_is_entered(steps: list[tuple[bool, int]], stripes: int) -> None:
    """Enter (True) or leave the innermost (False); with few stripes, subjects share them, and a
    shared stripe counts as held (the subject's writes are serialised all the same)."""
    locks = SubjectLocks(stripes=stripes)
    entered: list[int] = []
    with ExitStack() as stack:
        layers: list[ExitStack] = []
        for enter, which in steps:
            if enter:
                layer = stack.enter_context(ExitStack())
                layer.enter_context(locks.for_scope(SCOPES[which]))
                layers.append(layer)
                entered.append(which)
            elif layers:
                layers.pop().close()
                entered.pop()
            for scope in SCOPES:
                assert _held(locks, scope) == any(locks._stripe(SCOPES[i]) == locks._stripe(scope) for i in entered)
    assert not any(_held(locks, s) for s in SCOPES)


def test_another_thread_holding_the_subject_is_not_this_one() -> None:
    locks, inside, leave = SubjectLocks(), threading.Event(), threading.Event()

    def hold() -> None:
        with locks.for_scope(SCOPES[0]):
            locks.check_held(SCOPES[0])
            inside.set()
            leave.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    assert inside.wait(10)
    with pytest.raises(UnlockedWrite):
        locks.check_held(SCOPES[0])
    leave.set()
    other.join(10)


def test_a_failed_write_leaves_the_lock_and_its_count() -> None:
    locks = SubjectLocks()
    with pytest.raises(RuntimeError), locks.for_scope(SCOPES[0]):
        raise RuntimeError("a write failed")
    with pytest.raises(UnlockedWrite):
        locks.check_held(SCOPES[0])
    with locks.for_scope(SCOPES[0]):
        locks.check_held(SCOPES[0])
