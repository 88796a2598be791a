"""Chains, retrievers, detectors and handlers shared by the guard and callback tests; a tiny
NLI model for the checker tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import (
    RunnablePassthrough,
)
from pydantic import Field

from truthguard.rag import build_rag_chain
from truthguard.testing import FakeDetector, ScriptedChatModel


def moon_detector(**kw: Any) -> FakeDetector:
    """Fails any answer mentioning the moon."""
    return FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5, **kw)


def scripted_chain(answers: list[str]) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=answers)
    prompt = ChatPromptTemplate.from_template("{question}\n{feedback}").partial(feedback="")
    return prompt | model, model


class ListRetriever(BaseRetriever):
    """Returns the first ``search_kwargs["k"]`` of its passages, whatever the query."""

    passages: list[str]
    search_kwargs: dict[str, Any] = Field(default_factory=lambda: {"k": 1})
    queries: list[str] = Field(default_factory=list)

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        self.queries.append(query)
        return [Document(page_content=p) for p in self.passages[: self.search_kwargs["k"]]]


# -- a conversation: the user's own words are evidence of what was said --

TRAM = "Tram 28 is a tram line in Lisbon. It runs from Martim Moniz through the Alfama district."
HISTORY = [
    ("human", "I visited Lisbon in 2019 with my sister and we stayed in Belem."),
    ("ai", "Lovely! How can I help?"),
]
"""The turns before the question: only the user said the trip happened, in 2019."""
RESTATING = "You visited Lisbon in 2019 with your sister. Tram 28 runs through the Alfama district."
"""A reply restating the user's trip (history) and one fact from the passage (TRAM)."""

CHAT_RAG_PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer from the passages.\n\n{context}"),
        MessagesPlaceholder("chat_history", optional=True),
        ("human", "{question}\n\n{feedback}"),
    ]
).partial(feedback="")


def chat_rag_chain(model: Any) -> Any:
    """``build_rag_chain`` over TRAM with the chat history in its prompt (``chat_history``)."""
    return build_rag_chain(ListRetriever(passages=[TRAM]), model, prompt=CHAT_RAG_PROMPT)


def rag_chain(answers: Any, passages: list[str] | None = None) -> tuple[Any, Any]:
    model = ScriptedChatModel(script=answers)
    retriever = ListRetriever(passages=passages or ["p1", "p2", "p3"])
    return build_rag_chain(retriever, model), model


class Recorder(BaseCallbackHandler):
    """Records chain starts (name, tags, parent) and custom events."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, list[str], UUID | None, UUID]] = []
        self.events: list[tuple[str, Any, UUID]] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, **kw):
        self.starts.append((kw.get("name") or "", list(tags or []), parent_run_id, run_id))

    def on_custom_event(self, name, data, *, run_id, **kw):
        self.events.append((name, data, run_id))


# -- chains shaped like the LangChain / LangGraph apps the guard wraps --

TEXTBOOK_PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Answer from the context.\n{context}"), ("human", "{question}")]
)


def textbook_chain(model: Any, retriever: BaseRetriever) -> Any:
    """The LangChain tutorial RAG chain: string in, string out, documents dropped."""
    return (
        {
            "context": retriever | (lambda docs: "\n".join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | TEXTBOOK_PROMPT
        | model
        | StrOutputParser()
    )


def moon_then_sun() -> ScriptedChatModel:
    return ScriptedChatModel(
        script=lambda p: "The sun shines by day." if "fact-checker" in p else "The moon shines."
    )


def sun_after_feedback(p: str) -> str:
    return "The sun shines." if "fact-checker" in p else "The moon shines."


def echo_chain() -> Any:
    """A prompt and a scripted model that answers with the question it was given."""
    model = ScriptedChatModel(script=lambda p: f"answer: {p.split(':', 1)[1].strip()}")
    return ChatPromptTemplate.from_template("question: {question}") | model


def tiny_nli(path: Any, favour: str, words: list[str] | None = None) -> str:
    """A 1-layer BERT NLI classifier saved in ``path`` whose output always favours ``favour``."""
    import pytest

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    words = words or [
        "bi",
        "sheng",
        "made",
        "movable",
        "type",
        "from",
        "baked",
        "clay",
        "in",
        "the",
        "eleventh",
        "ninth",
        "century",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *words]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    labels = {0: "contradiction", 1: "entailment", 2: "neutral"}
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=512,
        num_labels=3,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 0.0, 0.0]))
        model.classifier.bias[{v: k for k, v in labels.items()}[favour]] = 6.0
    model.save_pretrained(path)
    transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    return str(path)


# Registered first, so it runs last of the exit hooks: after threading's own (where a non-daemon
# worker is joined) and every other atexit hook; what follows is the interpreter's teardown.
_EXIT_MARK = 'import atexit\natexit.register(print, "exit hooks done", flush=True)\n'


async def least_time(
    run: Callable[[], Awaitable[Any]], bound: float, tries: int = 3
) -> tuple[float, Any]:
    """Time ``run()`` up to ``tries`` times, stopping at the first under ``bound``: the least
    seconds and that run's result. A loaded machine holds a process back now and then; a
    defect shows every time."""
    import time

    best: tuple[float, Any] | None = None
    for _ in range(tries):
        started = time.perf_counter()
        out = await run()
        took = time.perf_counter() - started
        if best is None or took < best[0]:
            best = (took, out)
        if took < bound:
            break
    assert best is not None
    return best


def prompt_exit(
    timed: Callable[[], tuple[str, float, float]],
    healthy: Callable[[], tuple[str, float, float]],
    bound: float = 3.0,
    tries: int = 3,
) -> tuple[str, float, float, float]:
    """How promptly a process exits after its result: ``timed()`` (:func:`time_to_exit` of
    the case under test) up to ``tries`` times until one exits within ``bound`` seconds. Returns
    its line, the slowest exit hooks of all tries, the least exit and the bound it must keep:
    ``bound``, or, when no try kept it (a loaded machine's teardown), one second more than the
    least exit of ``tries`` runs of ``healthy()``, the same script after a healthy check."""
    runs = []
    for _ in range(tries):
        runs.append(timed())
        if runs[-1][2] < bound:
            break
    hooks = max(r[1] for r in runs)
    line, _, exited = min(runs, key=lambda r: r[2])
    if exited >= bound:
        bound = min(healthy()[2] for _ in range(tries)) + 1.0
    return line, hooks, exited, bound


def time_to_exit(script: str, *args: str, timeout: float = 30.0) -> tuple[str, float, float]:
    """Run ``script`` in a fresh interpreter: its first line of output, and the seconds from
    that line to the end of its exit hooks and to its exit."""
    import os
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", _EXIT_MARK + script, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        printed = time.perf_counter()
        mark = proc.stdout.readline()
        hooks = time.perf_counter()
        proc.wait(timeout=timeout)
        exited = time.perf_counter()
    finally:
        proc.kill()
        proc.wait()
    assert mark.strip() == "exit hooks done", (line, mark, proc.stderr.read()[-3000:])
    return line.strip(), hooks - printed, exited - printed


# specials in the order each family's real vocabulary numbers them
_FAMILY = {
    "roberta": (["<s>", "<pad>", "</s>", "<unk>"], "<s> $A </s>", "</s>"),
    "deberta": (["[PAD]", "[CLS]", "[SEP]", "[UNK]"], "[CLS] $A [SEP]", "[SEP]"),
    "t5": (["<pad>", "</s>", "<unk>"], "$A </s>", "</s>"),
}


def _tokenizer(family: str, words: list[str]):
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    specials, template, eos = _FAMILY[family]
    vocab = {t: i for i, t in enumerate([*specials, *words])}
    unk = next(t for t in specials if "unk" in t.lower())
    tok = Tokenizer(models.WordLevel(vocab, unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    ids = [(t, vocab[t]) for t in specials if t in template]
    # pairs as each family joins them (AlignScore tokenizes premise and claim as a pair)
    pair = {
        "roberta": "<s> $A </s> </s> $B </s>",
        "deberta": "[CLS] $A [SEP] $B [SEP]",
        "t5": "$A </s> $B </s>",
    }[family]
    tok.post_processor = processors.TemplateProcessing(
        single=template, pair=pair, special_tokens=ids
    )
    pad = next(t for t in specials if "pad" in t.lower())
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=eos, pad_token=pad, unk_token=unk, model_max_length=4096
    ), len(vocab)


def tiny_minicheck(path: Any, family: str, texts: Sequence[str]) -> str:
    """A MiniCheck-shaped model of ``family`` (roberta, deberta, t5) with random weights, saved
    in ``path``; its word-level vocabulary holds the words of ``texts`` and ``predict :``."""
    import pytest

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    found = {w for t in (*texts, "predict :") for w in re.findall(r"\w+|[^\w\s]+", t)}
    tokenizer, n = _tokenizer(family, sorted(found))
    torch.manual_seed(7)
    # wide initial weights, so that the random model's outputs differ from chunk to chunk
    small = {
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 16,
        "initializer_range": 0.3 if family == "deberta" else 1.0,
    }
    if family == "roberta":
        config = transformers.RobertaConfig(
            vocab_size=n, hidden_size=8, max_position_embeddings=514, pad_token_id=1, **small
        )
        net = transformers.RobertaForSequenceClassification(config)
    elif family == "deberta":
        config = transformers.DebertaV2Config(
            vocab_size=n, hidden_size=8, max_position_embeddings=2048, pad_token_id=0, **small
        )
        net = transformers.DebertaV2ForSequenceClassification(config)
    else:
        config = transformers.T5Config(
            vocab_size=256, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2,
            decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, initializer_factor=30.0,
        )  # fmt: skip
        net = transformers.T5ForConditionalGeneration(config)
    net.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def tiny_hhem(path: Any, texts: Sequence[str]) -> tuple[str, str]:
    """HHEM-2.1-Open's layout with a tiny random Flan-T5: ``path/model`` (config.json naming
    the foundation, model.safetensors under the ``t5.`` prefix) and ``path/foundation`` (the
    T5 config and a word-level tokenizer holding the words of ``texts`` and of the prompt)."""
    import pytest

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from safetensors.torch import save_file

    from truthguard.refchecker.hhem import HHEM_PROMPT

    prompt = HHEM_PROMPT.replace("<pad>", "").format(text1="", text2="")
    found = {w for t in (*texts, prompt) for w in re.findall(r"\w+|[^\w\s]+", t)}
    tokenizer, _ = _tokenizer("t5", sorted(found))
    foundation, model = path / "foundation", path / "model"
    config = transformers.T5Config(
        vocab_size=128, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, initializer_factor=1.0,
    )  # fmt: skip
    config.save_pretrained(foundation)
    tokenizer.save_pretrained(foundation)
    torch.manual_seed(7)
    net = transformers.T5ForTokenClassification(config)
    state = {f"t5.{k}": v.contiguous() for k, v in net.state_dict().items()}
    state.pop("t5.transformer.encoder.embed_tokens.weight", None)  # tied, as published
    model.mkdir()
    save_file(state, str(model / "model.safetensors"))
    (model / "config.json").write_text(
        json.dumps({"model_type": "HHEMv2", "foundation": str(foundation)})
    )
    return str(model), str(foundation)


def tiny_lettuce(path: Any, texts: Sequence[str], favour: int | None = None) -> str:
    """A tiny random ModernBERT token classifier saved in ``path`` (LettuceDetect's layout); with
    ``favour`` 0 or 1 every token leans to that class (1: unsupported)."""
    import pytest

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    prompt = (
        "Briefly answer the following question : Bear in mind that your response should be "
        "strictly based on the following passages : passage In case the passages do not contain "
        'the necessary information to answer the question , please reply with : " Unable to '
        'based on given . " output : 0 1 2 3 4 5 6 7 8 9'
    )
    found = sorted({w for t in (*texts, prompt) for w in re.findall(r"\w+|[^\w\s]+", t)})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate([*specials, *found])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
        unk_token="[UNK]", mask_token="[MASK]", model_max_length=8192,
    )  # fmt: skip
    config = transformers.ModernBertConfig(
        vocab_size=len(vocab), hidden_size=8, intermediate_size=16, num_hidden_layers=1,
        num_attention_heads=2, pad_token_id=0, cls_token_id=2, sep_token_id=3, num_labels=2,
        initializer_range=1.0,
    )  # fmt: skip
    torch.manual_seed(7)
    net = transformers.ModernBertForTokenClassification(config)
    if favour is not None:
        with torch.no_grad():
            net.classifier.weight.zero_()
            net.classifier.bias.zero_()
            net.classifier.bias[favour] = 4.0
    net.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def fresh_interpreter(code: str) -> Any:
    """Run ``code`` in a new Python process (this environment) and return the JSON value its
    last printed line holds; the process must exit 0."""
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
