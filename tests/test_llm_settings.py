"""LLMSettings: validation and the one retry layer."""

from __future__ import annotations

import pytest

from truthguard.llm import LLMSettings
from truthguard.testing import ScriptedChatModel


def test_settings_reject_bad_values_naming_the_field():
    with pytest.raises(ValueError, match="max_concurrency"):
        LLMSettings(max_concurrency=0)
    with pytest.raises(ValueError, match="retries"):
        LLMSettings(retries=3)


def test_one_retry_layer_by_default():
    from langchain_openai import ChatOpenAI

    settings = LLMSettings()
    own = ChatOpenAI(model="m", api_key="k", base_url="http://127.0.0.1:9/v1")  # max_retries=2
    # The session makes the retries the client would have made (its own are turned off).
    assert settings.retries_for(own) == 2
    assert settings.retries_for(own.bind(stop=["x"])) == 2
    assert settings.retries_for(ChatOpenAI(model="m", api_key="k", max_retries=5)) == 5
    assert settings.retries_for(ChatOpenAI(model="m", api_key="k", max_retries=0)) == 2
    assert settings.retries_for(ScriptedChatModel()) == 2
    assert LLMSettings(max_retries=1).retries_for(own) == 1


def test_bad_settings_raise_the_librarys_error_naming_the_field():
    import pickle

    from truthguard.errors import InvalidInputError
    from truthguard.llm import LLMSettings

    for kwargs, field in (
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"timeout": "soon"}, "timeout"),
        ({"retries": 3}, "retries"),
    ):
        with pytest.raises(InvalidInputError) as info:
            LLMSettings(**kwargs)
        assert info.value.field == field
    good = LLMSettings(timeout=3.0)
    assert pickle.loads(pickle.dumps(good)) == good
    assert good.model_copy(update={"timeout": 4.0}).timeout == 4.0
