"""The in-flight map: the first caller of an artifact id leads, later ones share its future."""

from __future__ import annotations

import threading

from truthguard.store.inflight import InflightCalls


def test_the_first_caller_leads_and_later_callers_share_its_future():
    calls = InflightCalls()
    future, leads = calls.join("a-1")
    again, follows = calls.join("a-1")
    other, leads_other = calls.join("a-2")
    assert leads and not follows and again is future
    assert leads_other and other is not future
    calls.forget("a-1")
    fresh, leads_again = calls.join("a-1")
    assert leads_again and fresh is not future
    calls.forget("never joined")  # nothing to forget: no error


def test_one_leader_among_threads_joining_at_once():
    calls = InflightCalls()
    barrier = threading.Barrier(8)
    results = []

    def join() -> None:
        barrier.wait()
        results.append(calls.join("a-1"))

    threads = [threading.Thread(target=join) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(leads for _, leads in results) == 1
    assert len({id(future) for future, _ in results}) == 1
