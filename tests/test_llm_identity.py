"""model_id: stable, distinct names for models and callables."""

from __future__ import annotations

import pytest
from langchain_core.runnables import RunnableLambda

from truthguard.llm import model_id
from truthguard.testing import ScriptedChatModel


def test_model_id_of_a_chat_model():
    assert model_id(ScriptedChatModel(model_name="m1")) == "ScriptedChatModel:m1"


def test_plain_callables_get_distinct_model_ids():
    def first(p):
        return p

    def second(p):
        return p

    assert model_id(first) != model_id(second)
    assert model_id(first).startswith("callable:")


def test_partials_and_closures_over_different_models_get_different_ids():
    import functools

    def ask(model_name: str, prompt: str) -> str:
        return prompt

    assert model_id(functools.partial(ask, "gpt-a")) != model_id(functools.partial(ask, "gpt-b"))
    assert model_id(functools.partial(ask, "gpt-a")) == model_id(functools.partial(ask, "gpt-a"))

    def make(model):
        return lambda prompt: model.invoke(prompt).content

    a, b = ScriptedChatModel(model_name="a"), ScriptedChatModel(model_name="b")
    assert model_id(make(a)) != model_id(make(b))
    assert model_id(make(a)) == model_id(make(ScriptedChatModel(model_name="a")))
    assert model_id(RunnableLambda(make(a))) == model_id(make(a))
    assert model_id(RunnableLambda(make(a), name="mine")) == "RunnableLambda:mine"
    # Same name, different code: two lambdas in one scope.
    first, second = (lambda p: p + "1"), (lambda p: p + "2")
    assert model_id(first) != model_id(second)


def test_a_callable_bound_to_an_anonymous_object_warns_and_is_told_apart():
    class Client:
        def ask(self, prompt: str) -> str:
            return prompt

    c1, c2 = Client(), Client()
    with pytest.warns(UserWarning, match="stable identity"):
        assert model_id(c1.ask) != model_id(c2.ask)
