"""LangGraph checkpoints keep truthguard results as their own types, without warnings."""

from __future__ import annotations

import base64
import logging
from typing import Any, TypedDict

import pytest

from truthguard.errors import InvalidInputError
from truthguard.guard import Attempt, GuardResult, GuardVerdict, HallucinationGuard
from truthguard.result import DetectionResult, Label
from truthguard.serde import LANGGRAPH_ALLOWLIST, checkpoint_serializer
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_results_round_trip_through_a_checkpointed_graph_without_warnings(caplog):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    guard = HallucinationGuard(
        chain=ScriptedChatModel(script=lambda p: "Paris."), detectors=FakeDetector(score=0.9)
    )

    class State(TypedDict, total=False):
        question: str
        check: DetectionResult
        guarded: GuardResult
        label: Label

    def node(state: State) -> dict[str, Any]:
        out = guard.invoke(state["question"])
        return {"check": out.attempts[0].results[0], "guarded": out, "label": Label.FACTUAL}

    graph = (
        StateGraph(State)
        .add_node("check", node)
        .add_edge(START, "check")
        .add_edge("check", END)
        .compile(checkpointer=InMemorySaver(serde=checkpoint_serializer()))
    )
    config = {"configurable": {"thread_id": "t1"}}
    with caplog.at_level(logging.WARNING):
        graph.invoke({"question": "Capital of France?"}, config)
        values = graph.get_state(config).values
    assert isinstance(values["check"], DetectionResult) and values["check"].score == 0.9
    assert isinstance(values["guarded"], GuardResult) and values["guarded"].answer == "Paris."
    assert values["label"] is Label.FACTUAL
    assert not [r for r in caplog.records if "unregistered" in r.getMessage()]
    assert not [r for r in caplog.records if "Blocked" in r.getMessage()]


def test_allowlist_names_real_classes_and_extra_is_checked():
    import importlib

    for module, name in LANGGRAPH_ALLOWLIST:
        assert hasattr(importlib.import_module(module), name)

    class Mine:
        pass

    checkpoint_serializer([Mine, ("my.module", "Thing")])
    with pytest.raises(InvalidInputError) as info:
        checkpoint_serializer(["nope"])  # type: ignore[list-item]
    assert info.value.field == "extra[0]"


# {"guarded": GuardResult, "verdict": GuardVerdict, "attempt": Attempt} as truthguard's
# checkpoint serializer wrote it before the guard's models were recorded under their public
# module: each type is named "truthguard.guard._models".
OLD_CHECKPOINT = base64.b64decode(
    "g6dndWFyZGVkyASPBZS4dHJ1dGhndWFyZC5ndWFyZC5fbW9kZWxzq0d1YXJkUmVzdWx0iKhxdWVzdGlvbrJDYXBp"
    "dGFsIG9mIEZyYW5jZT+mYW5zd2VyplBhcmlzLqZvdXRwdXTApnN0YXR1c6ZwYXNzZWSmcGFzc2Vkw6d2ZXJkaWN0"
    "iKZwYXNzZWTDp2NvbWJpbmWjYWxspXNjb3Jlyz/szMzMzMzNpnNjb3Jlc4CmcGFzc2VzgaRmYWtlw6ZlcnJvcnOA"
    "q2ZhaWxlZF9vcGVuwqZyZWFzb26gqGF0dGVtcHRzkYumbnVtYmVyAaZwb2xpY3nApmFuc3dlcqZQYXJpcy6mb3V0"
    "cHV0wKhjb250ZXh0c5CncmVzdWx0c5GNqGRldGVjdG9ypGZha2Wlc2NvcmXLP+zMzMzMzM2ncGFzc2luZ8OpdGhy"
    "ZXNob2xkyz/gAAAAAAAApWxhYmVsxyEAk7F0cnV0aGd1YXJkLnJlc3VsdKVMYWJlbKdmYWN0dWFsq2V4cGxhbmF0"
    "aW9uoKdkZXRhaWxzgKV1c2FnZYipbGxtX2NhbGxzAKxjYWNoZWRfY2FsbHMArGZhaWxlZF9jYWxscwCtcHJvbXB0"
    "X3Rva2VucwCxY29tcGxldGlvbl90b2tlbnMAsGVzdGltYXRlZF90b2tlbnPCq2xsbV9zZWNvbmRzywAAAAAAAAAA"
    "rHdhbGxfc2Vjb25kc8sAAAAAAAAAAK5pbnZhbGlkX3JlYXNvbsCqcmF3X291dHB1dMCocXVlc3Rpb27ApmFuc3dl"
    "csCoY29udGV4dHPAp3ZlcmRpY3SIpnBhc3NlZMOnY29tYmluZaNhbGylc2NvcmXLP+zMzMzMzM2mc2NvcmVzgKZw"
    "YXNzZXOBpGZha2XDpmVycm9yc4CrZmFpbGVkX29wZW7CpnJlYXNvbqCrY2hhaW5fdXNhZ2WIqWxsbV9jYWxscwCs"
    "Y2FjaGVkX2NhbGxzAKxmYWlsZWRfY2FsbHMArXByb21wdF90b2tlbnMAsWNvbXBsZXRpb25fdG9rZW5zALBlc3Rp"
    "bWF0ZWRfdG9rZW5zwqtsbG1fc2Vjb25kc8sAAAAAAAAAAKx3YWxsX3NlY29uZHPLAAAAAAAAAACrY2hlY2tfdXNh"
    "Z2WIqWxsbV9jYWxscwCsY2FjaGVkX2NhbGxzAKxmYWlsZWRfY2FsbHMArXByb21wdF90b2tlbnMAsWNvbXBsZXRp"
    "b25fdG9rZW5zALBlc3RpbWF0ZWRfdG9rZW5zwqtsbG1fc2Vjb25kc8sAAAAAAAAAAKx3YWxsX3NlY29uZHPLAAAA"
    "AAAAAAClZXJyb3LAp3NlY29uZHPLAAAAAAAAAACldXNhZ2WIqWxsbV9jYWxscwGsY2FjaGVkX2NhbGxzAKxmYWls"
    "ZWRfY2FsbHMArXByb21wdF90b2tlbnMAsWNvbXBsZXRpb25fdG9rZW5zALBlc3RpbWF0ZWRfdG9rZW5zwqtsbG1f"
    "c2Vjb25kc8sAAAAAAAAAAKx3YWxsX3NlY29uZHPLAAAAAAAAAACzbW9kZWxfdmFsaWRhdGVfanNvbqd2ZXJkaWN0"
    "x5IFlLh0cnV0aGd1YXJkLmd1YXJkLl9tb2RlbHOsR3VhcmRWZXJkaWN0iKZwYXNzZWTDp2NvbWJpbmWjYWxspXNj"
    "b3Jlyz/szMzMzMzNpnNjb3Jlc4CmcGFzc2VzgaRmYWtlw6ZlcnJvcnOAq2ZhaWxlZF9vcGVuwqZyZWFzb26gs21v"
    "ZGVsX3ZhbGlkYXRlX2pzb26nYXR0ZW1wdMgDTAWUuHRydXRoZ3VhcmQuZ3VhcmQuX21vZGVsc6dBdHRlbXB0i6Zu"
    "dW1iZXIBpnBvbGljecCmYW5zd2VyplBhcmlzLqZvdXRwdXTAqGNvbnRleHRzkKdyZXN1bHRzkY2oZGV0ZWN0b3Kk"
    "ZmFrZaVzY29yZcs/7MzMzMzMzadwYXNzaW5nw6l0aHJlc2hvbGTLP+AAAAAAAAClbGFiZWzHIQCTsXRydXRoZ3Vh"
    "cmQucmVzdWx0pUxhYmVsp2ZhY3R1YWyrZXhwbGFuYXRpb26gp2RldGFpbHOApXVzYWdliKlsbG1fY2FsbHMArGNh"
    "Y2hlZF9jYWxscwCsZmFpbGVkX2NhbGxzAK1wcm9tcHRfdG9rZW5zALFjb21wbGV0aW9uX3Rva2VucwCwZXN0aW1h"
    "dGVkX3Rva2Vuc8KrbGxtX3NlY29uZHPLAAAAAAAAAACsd2FsbF9zZWNvbmRzywAAAAAAAAAArmludmFsaWRfcmVh"
    "c29uwKpyYXdfb3V0cHV0wKhxdWVzdGlvbsCmYW5zd2VywKhjb250ZXh0c8CndmVyZGljdIimcGFzc2Vkw6djb21i"
    "aW5lo2FsbKVzY29yZcs/7MzMzMzMzaZzY29yZXOApnBhc3Nlc4GkZmFrZcOmZXJyb3JzgKtmYWlsZWRfb3BlbsKm"
    "cmVhc29uoKtjaGFpbl91c2FnZYipbGxtX2NhbGxzAKxjYWNoZWRfY2FsbHMArGZhaWxlZF9jYWxscwCtcHJvbXB0"
    "X3Rva2VucwCxY29tcGxldGlvbl90b2tlbnMAsGVzdGltYXRlZF90b2tlbnPCq2xsbV9zZWNvbmRzywAAAAAAAAAA"
    "rHdhbGxfc2Vjb25kc8sAAAAAAAAAAKtjaGVja191c2FnZYipbGxtX2NhbGxzAKxjYWNoZWRfY2FsbHMArGZhaWxl"
    "ZF9jYWxscwCtcHJvbXB0X3Rva2VucwCxY29tcGxldGlvbl90b2tlbnMAsGVzdGltYXRlZF90b2tlbnPCq2xsbV9z"
    "ZWNvbmRzywAAAAAAAAAArHdhbGxfc2Vjb25kc8sAAAAAAAAAAKVlcnJvcsCnc2Vjb25kc8sAAAAAAAAAALNtb2Rl"
    "bF92YWxpZGF0ZV9qc29u"
)


def test_a_checkpoint_written_with_the_old_private_module_names_still_loads(caplog):
    assert OLD_CHECKPOINT.count(b"truthguard.guard._models") == 3
    with caplog.at_level(logging.WARNING):
        values = checkpoint_serializer().loads_typed(("msgpack", OLD_CHECKPOINT))
    assert not [r for r in caplog.records if "unregistered" in r.getMessage()]
    assert not [r for r in caplog.records if "Blocked" in r.getMessage()]
    guarded, verdict, attempt = values["guarded"], values["verdict"], values["attempt"]
    assert isinstance(guarded, GuardResult) and guarded.answer == "Paris."
    assert guarded.attempts[0].results[0].label is Label.FACTUAL
    assert isinstance(verdict, GuardVerdict) and verdict.passes == {"fake": True}
    assert isinstance(attempt, Attempt) and attempt.results[0].threshold == 0.5
    assert guarded.usage.llm_calls == 1


def test_checkpoints_record_public_module_names():
    serde = checkpoint_serializer()
    verdict = GuardVerdict(passing=True, combine="all")
    kind, blob = serde.dumps_typed({"verdict": verdict, "label": Label.FACTUAL})
    assert b"truthguard.guard\xacGuardVerdict" in blob and b"_models" not in blob
    assert serde.loads_typed((kind, blob)) == {"verdict": verdict, "label": Label.FACTUAL}
