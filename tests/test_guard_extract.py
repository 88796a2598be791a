"""question_of / history_of: what a chain input says was asked, and what was said before."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from truthguard.detector import DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.guard.extract import HISTORY_KEYS, history_of, question_of

CHAT = [
    SystemMessage("You are a travel assistant."),
    HumanMessage("I visited Lisbon in 2019 with my sister."),
    AIMessage("Lovely! How can I help?"),
    ToolMessage("Tram 28 runs through Alfama.", tool_call_id="call_1"),
    HumanMessage("Which tram goes through Alfama?"),
]


def test_the_conventional_keys_are_searched_in_order():
    assert HISTORY_KEYS == ("chat_history", "history", "messages")
    both = {"question": "Q?", "history": ["from history"], "chat_history": ["from chat_history"]}
    assert history_of(both, question="Q?") == ["from chat_history"]
    assert history_of(both, "history", question="Q?") == ["from history"]


def test_no_history_is_empty_and_an_empty_key_turns_it_off():
    assert history_of("Q?") == [] and history_of({"question": "Q?"}) == []
    assert history_of({"question": "Q?", "chat_history": None}) == []
    assert history_of({"question": "Q?", "chat_history": "  "}) == []
    assert history_of({"question": "Q?", "chat_history": ["said"]}, "") == []


def test_turns_of_every_shape_are_kept_in_order():
    value = [
        "a bare string",
        ("human", "a pair"),
        ["ai", "a pair as a list"],
        {"role": "user", "content": "an OpenAI dict"},
        {"role": "assistant", "content": [{"type": "text", "text": "content blocks"}]},
        HumanMessage("a message"),
    ]
    turns = history_of({"question": "Q?", "chat_history": value}, question="Q?")
    assert turns == [
        "a bare string",
        ("human", "a pair"),
        ("ai", "a pair as a list"),
        ("human", "an OpenAI dict"),
        ("ai", "content blocks"),
        value[-1],
    ]
    checked = DetectorInput(question="Q?", answer="A.", history=turns)
    assert checked.history[3:] == ["an OpenAI dict", "content blocks", "a message"]
    assert history_of({"question": "Q?", "history": "Human: hi\nAI: hello"}) == [
        "Human: hi\nAI: hello"
    ]  # a transcript in one string, as create_history_aware_retriever accepts


def test_system_prompts_tool_results_and_blank_turns_are_not_turns():
    value = [*CHAT[:4], AIMessage(""), ("system", "be brief"), ("tool", "42")]
    assert history_of({"question": "Q?", "chat_history": value}, question="Q?") == CHAT[1:3]


def test_messages_input_the_question_is_not_duplicated_into_the_history():
    question = question_of({"messages": CHAT})
    assert question == "Which tram goes through Alfama?"
    assert history_of({"messages": CHAT}, question=question) == CHAT[1:3]
    assert question_of(CHAT) == question  # a chat model's own input: a list of messages
    assert history_of(CHAT, question=question) == CHAT[1:3]
    # what follows the question in the same turn (a tool call, its result) is not history either
    turn = [*CHAT, AIMessage("", tool_calls=[{"name": "s", "args": {}, "id": "c"}])]
    assert history_of({"messages": turn}, question=question) == CHAT[1:3]


def test_a_history_the_app_appended_the_question_to_loses_only_that_turn():
    value = [("human", "I visited Lisbon in 2019."), ("ai", "Nice."), ("human", "Which tram?")]
    inp = {"question": "Which tram?", "chat_history": value}
    assert history_of(inp, question="Which tram?") == value[:2]
    asked_before = {"question": "And now?", "chat_history": value}
    assert history_of(asked_before, question="And now?") == value  # an earlier question stays


def test_a_bad_history_names_the_key_or_the_turn():
    for value, field in [
        (5, "chat_history"),
        ({"role": "user"}, "chat_history"),
        (b"bytes", "chat_history"),
        (["fine", 5], "chat_history[1]"),
        ([("human", 3)], "chat_history[0]"),
    ]:
        with pytest.raises(InvalidInputError) as info:
            history_of({"question": "Q?", "chat_history": value})
        assert info.value.field == field, value
    with pytest.raises(InvalidInputError) as info:
        history_of({"question": "Q?"}, "conversation")  # a configured key must be there
    assert info.value.field == "conversation"
    with pytest.raises(InvalidInputError) as info:
        history_of("Q?", "chat_history")
    assert info.value.field == "chat_history"


def test_question_of_reads_messages_and_still_refuses_what_is_not_a_question():
    assert question_of({"messages": [("user", "Hi there?")]}) == "Hi there?"
    assert question_of({"question": "Q?", "messages": CHAT}) == "Q?"  # the question key first
    for bad in (5, ["a"], {}, [("ai", "only the assistant spoke")]):
        with pytest.raises(InvalidInputError) as info:
            question_of({"question": bad})
        assert info.value.field == "question"


def test_llamaindex_chat_messages_are_turns_with_their_roles():
    chat = pytest.importorskip("llama_index.core.llms")
    value = [
        chat.ChatMessage(role="system", content="You are a travel assistant."),
        chat.ChatMessage(role="user", content="I visited Lisbon in 2019."),
        chat.ChatMessage(role="assistant", content="Lovely!"),
        chat.ChatMessage(role="user", content="Which tram?"),
        chat.ChatMessage(role="assistant", content="Tram 28."),  # the answer being checked
    ]
    assert history_of({"history": value}, question="Which tram?") == [
        ("human", "I visited Lisbon in 2019."),
        ("ai", "Lovely!"),
    ]


def test_a_check_input_carries_the_history_only_when_there_is_one():
    from truthguard.guard.extract import check_input

    plain = check_input("Q?", "A.", ["ctx"])
    assert plain == {"question": "Q?", "answer": "A.", "contexts": ["ctx"]}
    assert check_input("Q?", "A.", ["ctx"], []) == plain
    said = check_input("Q?", "A.", ["ctx"], [("human", "hi")])
    assert said == {**plain, "history": [("human", "hi")]}
