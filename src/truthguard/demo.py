"""``truthguard demo``: a guarded chain, a scoring callback handler and the FEWL example selector.

Offline (the default) no model is called. The demo first runs on what ships in the package, so it
needs neither network nor data:

1. a RAG chain over the packaged corpus whose chat model is scripted (replies written here, some
   wrong on purpose), wrapped in a :class:`~truthguard.guard.HallucinationGuard` with the local
   RefChecker, Regenerate and Fallback;
2. a :class:`~truthguard.callbacks.TruthGuardCallbackHandler` on that chain, logging every answer;
3. the :class:`~truthguard.selectors.FEWLExampleSelector` over a small pool, with a scripted
   reference model.

Then the recorded-benchmark sections, when their data is found (else one line says which were
skipped and how to get the data):

4. a chain "write a passage about <entity>" whose model replays ChatGPT's recorded PHD passages,
   guarded by Reverse Validation (EM) on ChatGPT's recorded outputs, scored against the human
   labels, with a callback handler scoring every raw passage with the QG variant;
5. the FEWL example selector over the RefChecker benchmark: for each question, six LLMs'
   recorded answers are the candidates, each scored by FEWL against the other six models'
   recorded answers (the reference panel), and checked against the human claim labels.

``--live`` runs a RAG chain over the small corpus shipped with truthguard on a real model
(``langchain-openai``): set ``OPENAI_API_KEY``, or ``OPENAI_BASE_URL`` for any OpenAI-compatible
server (``TRUTHGUARD_LIVE_MODEL`` picks the model, default ``gpt-4o-mini``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import textwrap
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["add_arguments", "live_model_from_env", "run", "run_live", "run_offline"]

PASSAGE_PROMPT = "Write a short encyclopedia passage about {entity}."
FALLBACK_ANSWER = "I could not verify a passage about this entity, so I am not showing one."
CORPUS_FALLBACK = "I cannot answer that reliably from the documents I have."
# A small pool for the live selector: each question has a right and a wrong candidate answer,
# written from the shipped corpus; FEWL, with the live model as reference, must tell them apart.
LIVE_POOL = (
    {
        "question": "How many planets orbit the Sun?",
        "answers": ["Nine planets orbit the Sun, Pluto included.", "Eight planets orbit the Sun."],
    },
    {
        "question": "Who printed the Gutenberg Bible, and where?",
        "answers": [
            "Johannes Gutenberg's workshop in Mainz printed it in the 1450s.",
            "Aldus Manutius printed it in Venice around 1500.",
        ],
    },
    {
        "question": "What gives Mars its red colour?",
        "answers": ["Its red colour comes from copper in its rocks.", "Iron oxide in its dust."],
    },
)
LIVE_QUESTIONS = (
    "Which planet has the moons Phobos and Deimos?",
    "What did Bi Sheng make movable type from?",
    "How does Reverse Validation decide that a passage is hallucinated?",
    "When was Pluto reclassified as a dwarf planet, and by whom?",
)
WIDTH = 96


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", default=None, help="data directory (default: $TRUTHGUARD_DATA_DIR)"
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="use a real model over the shipped corpus (needs OPENAI_API_KEY or OPENAI_BASE_URL)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="use only this many PHD passages and RefChecker questions (quick run)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="directory for the callback handler's JSONL log (default: a temporary directory)",
    )


def _rule(title: str) -> None:
    print()
    print(f"== {title} ".ljust(WIDTH, "="))


def _say(text: str) -> None:
    print(textwrap.fill(" ".join(text.split()), WIDTH))


def _short(text: str | None, n: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."


def _prf(pred: list[bool], gold: list[bool]) -> tuple[float, float, float]:
    from truthguard.metrics import confusion, precision_recall_f1

    precision, recall, f1 = precision_recall_f1(*confusion(pred, gold))
    return precision or 0.0, recall or 0.0, f1 or 0.0


def _spread(items: list[Any], limit: int | None) -> list[Any]:
    """``limit`` items spread evenly over the list (all of them when ``limit`` is None)."""
    if limit is None or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


# -- offline, embedded: the packaged corpus with scripted replies ------------------------------

# The scripted "LLM" of the embedded demo: canned replies written for truthguard's own corpus.
# Each entry: a question, the first reply, and the reply after the guard's feedback (None: the
# same reply again). Some first replies are wrong on purpose, so the guard has work to do.
EMBEDDED_TURNS = (
    (
        "Which planet has the moons Phobos and Deimos?",
        "Mars has two small moons, Phobos and Deimos.",
        None,
    ),
    (
        "What gives Mars its red colour?",
        "Mars owes its red colour to copper in its rocks.",
        "Mars gets its red colour from iron oxide in the dust on its surface.",
    ),
    (
        "Where was the Gutenberg Bible printed?",
        "The Gutenberg Bible was printed in Mainz in the 1450s.",
        None,
    ),
    (
        "When was Pluto reclassified as a dwarf planet, and by whom?",
        "NASA reclassified Pluto as a dwarf planet in 1995.",
        "Pluto became a dwarf planet in 1995, by a vote at NASA.",
    ),
)
# The embedded selector's pool: a wrong candidate first, then a right one (our words), and the
# scripted reference model's answers FEWL scores them against.
EMBEDDED_POOL = (
    {
        "question": "How many planets orbit the Sun?",
        "answers": [
            "Nine planets orbit the Sun, the ninth being Pluto.",
            "Eight planets orbit the Sun; Pluto counts as a dwarf planet.",
        ],
    },
    {
        "question": "Who printed the Gutenberg Bible, and where?",
        "answers": [
            "Aldus Manutius printed it in Venice around 1500.",
            "Johannes Gutenberg's workshop in Mainz printed it in the 1450s.",
        ],
    },
    {
        "question": "What gives Mars its red colour?",
        "answers": [
            "Copper in its rocks gives Mars its red colour.",
            "Iron oxide in the dust on its surface makes Mars red.",
        ],
    },
)
EMBEDDED_REFERENCES = {
    "How many planets": "Eight planets orbit the Sun. Pluto has been a dwarf planet since 2006.",
    "Gutenberg Bible": "Johannes Gutenberg printed it in Mainz, in the 1450s.",
    "red colour": "Iron oxide, a kind of rust, in the dust on its surface makes Mars red.",
}


def _scripted_writer() -> Any:
    from truthguard.testing import ScriptedChatModel

    def reply(prompt: str) -> str:
        again = "fact-checker doubted" in prompt  # the guard's Regenerate feedback
        for question, first, second in EMBEDDED_TURNS:
            if question in prompt:
                return (second or first) if again else first
        return "I cannot tell from the passages."

    return ScriptedChatModel(model_name="scripted-writer", script=reply)


def _scripted_reference() -> Any:
    from truthguard.testing import ScriptedChatModel

    return ScriptedChatModel(
        model_name="scripted-reference",
        script=dict(EMBEDDED_REFERENCES),
        default="I do not know.",
    )


def _embedded_section(out_dir: Path) -> None:
    from truthguard.callbacks import JSONLSink, TruthGuardCallbackHandler
    from truthguard.guard import Fallback, HallucinationGuard, Regenerate
    from truthguard.rag import build_rag_chain, chroma_retriever, corpus_documents
    from truthguard.refchecker import RefChecker

    docs = corpus_documents()
    log_path = out_dir / "truthguard_corpus_scores.jsonl"
    log_path.unlink(missing_ok=True)
    monitor = TruthGuardCallbackHandler(RefChecker(threshold=0.5), sinks=[JSONLSink(log_path)])
    chain = build_rag_chain(chroma_retriever(docs, k=2), _scripted_writer()).with_config(
        callbacks=[monitor]
    )
    guard = HallucinationGuard(
        chain=chain,
        detectors=[RefChecker(threshold=0.5)],
        policies=[Regenerate(), Fallback(answer=CORPUS_FALLBACK)],
    )

    _rule(f"A guarded RAG chain over the packaged corpus ({len(docs)} passages)")
    _say(
        "A RAG chain retrieves two passages from the corpus shipped inside truthguard and asks a "
        "scripted chat model, whose replies are written into the demo (some wrong on purpose). "
        "HallucinationGuard checks every answer claim by claim against the retrieved passages "
        "(RefChecker, local checker, no model call). A failing answer is regenerated with the "
        "checker's notes; if that fails too, a fixed reply is released instead."
    )
    for question, _, _ in EMBEDDED_TURNS:
        r = guard.invoke({"question": question})
        steps = " -> ".join(
            f"{a.policy or 'first'}:{'pass' if a.passing else 'fail' if a.verdict else 'no check'}"
            for a in r.attempts
        )
        print()
        print(f"Q: {question}")
        for a in r.attempts:
            if a.results:
                print(f"   {a.policy or 'first'} answer: {_short(str(a.answer or ''), 80)}")
                print(f"      checker: {_short(a.results[0].explanation, 80)}")
        print(f"A: {_short(r.answer, 90)}")
        print(f"   guard: {r.status}; attempts {steps}")

    _rule("The callback handler's log of the same chain")
    assert monitor.close(timeout=120)
    summary = monitor.summary()
    _say(
        "The chain also carries a TruthGuardCallbackHandler: it captured every answer the chain "
        "produced (regenerated ones too), scored it off the request path with its own RefChecker "
        f"and wrote one JSON line per answer to {log_path}."
    )
    print()
    for line in log_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        print(f"  {rec['status']:<8}{rec['label']!s:<14}{_short(rec['answer'], 70)}")
    rate = summary["pass_rate"]
    shown_rate = "n/a" if rate is None else f"{100 * rate:.1f}%"
    print(
        f"summary: {summary['count']} records, {summary['scored']} scored, pass rate {shown_rate}"
    )

    _embedded_selector()


def _embedded_selector() -> None:
    from langchain_core.prompts import FewShotPromptTemplate, PromptTemplate

    from truthguard._sync import run_sync
    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.fewl import FEWL
    from truthguard.selectors import FEWLExampleSelector

    _rule("The FEWL example selector over a small pool")
    _say(
        f"{len(EMBEDDED_POOL)} pool questions each have a wrong and a right candidate answer, in "
        "that order. FEWL scores both against a scripted reference model's answer (one "
        "reference call per question, no laziness penalty); the selector keeps the better one as "
        "the question's few-shot answer, where the baseline keeps the first candidate."
    )
    fewl = FEWL(
        reference_models=[_scripted_reference()],
        mode="single",
        expertise="uniform",
        penalty=False,
        threshold=0.0,  # scores are only compared
    )
    selector = run_sync(
        FEWLExampleSelector.afrom_examples(
            list(EMBEDDED_POOL), SimilarityEmbeddings(), scorer=fewl, k=2, include_score=True
        )
    )
    query = {"question": "Which planet is red, and why?"}
    print()
    print(f"Two exemplars for a new question: {query['question']}")
    for mode in ("fewl", "baseline"):
        selector.mode = mode
        print(f"  {mode}:")
        for ex in selector.select_examples(query):
            print(f"    [FEWL {ex['fewl_score']:+.3f}] {ex['question']} -> {ex['answer']}")
    selector.mode = "fewl"
    prompt = FewShotPromptTemplate(
        example_selector=selector,
        example_prompt=PromptTemplate.from_template("Q: {question}\nA: {answer}"),
        suffix="Q: {question}\nA:",
        input_variables=["question"],
    )
    print()
    print("The few-shot prompt the FEWL selector builds (inside a FewShotPromptTemplate):")
    print(textwrap.indent(prompt.format(**query), "  "))


# -- offline: guarded chain over PHD ---------------------------------------------------------------


def _phd_section(args: argparse.Namespace, out_dir: Path) -> None:
    from langchain_core.prompts import ChatPromptTemplate

    from truthguard.callbacks import JSONLSink, TruthGuardCallbackHandler
    from truthguard.datasets import load_phd
    from truthguard.guard import Fallback, HallucinationGuard
    from truthguard.rv import ReverseValidation, replay_model
    from truthguard.testing import ReplayChatModel

    passages = _spread(load_phd(args.data), args.limit)
    prompt = ChatPromptTemplate.from_template(PASSAGE_PROMPT)
    # The "LLM" of the chain: ChatGPT's recorded passage for each entity (keyed by prompt text).
    writer = ReplayChatModel(
        model_name="chatgpt-phd-replay",
        recordings={PASSAGE_PROMPT.format(entity=p.entity): p.passage for p in passages},
        report_usage=False,
    )
    log_path = out_dir / "truthguard_scores.jsonl"
    log_path.unlink(missing_ok=True)
    # Replays of the paper's runs: no rebuilt stage-1 query recorded, leaking queries counted
    # as the paper counted them (a live detector would give such a match no verdict).
    replayed = {"rebuild_leaks": False, "trust_leaking_queries": True}
    monitor = TruthGuardCallbackHandler(
        ReverseValidation(model=replay_model("qg", args.data), variant="qg", **replayed),
        sinks=[JSONLSink(log_path)],
        detector_fields=["entity"],
    )
    chain = (prompt | writer).with_config(callbacks=[monitor], run_name="passage_writer")
    guard = HallucinationGuard(
        chain=chain,
        detectors=[
            ReverseValidation(model=replay_model("em", args.data), variant="em", **replayed)
        ],
        detector_fields=["entity"],
        policies=[Fallback(answer=FALLBACK_ANSWER)],
        batch_concurrency=8,
    )

    _rule("Recorded: a guarded chain over the PHD passages")
    _say(
        f"The chain asks for a passage about an entity; its model replays the passage ChatGPT "
        f"wrote for PHD ({len(passages)} passages). HallucinationGuard checks each passage with "
        "Reverse Validation (entity-matching variant, ChatGPT's recorded outputs): the features "
        "the passage lists are turned into a query, and if the model cannot name the entity back, "
        "the passage is rejected and the guard's Fallback policy releases a safe reply instead. "
        "The rejected passage is kept in the result's attempts."
    )
    started = time.perf_counter()
    inputs = [{"question": f"Tell me about {p.entity}.", "entity": p.entity} for p in passages]
    results = guard.batch(inputs)
    seconds = time.perf_counter() - started
    print()
    print(f"{'#':>3}  {'entity':<28}{'domain':<11}{'human label':<13}{'guard':<10}what happened")
    for i, (p, r) in enumerate(zip(passages, results, strict=True), 1):
        first = r.attempts[0]
        rv = first.results[0]
        if r.status == "passed":
            action = "passage released"
        else:
            why = (rv.details.get("match") or {}).get("reason") or rv.invalid_reason
            action = f"fallback released; {_short(why, 60)}"
        verdict = "pass" if first.passing else "reject"
        print(f"{i:>3}  {_short(p.entity, 27):<28}{p.domain:<11}{p.label:<13}{verdict:<10}{action}")
    usage = sum((r.usage.total_tokens for r in results), 0)
    print()
    print(
        f"{len(results)} passages in {seconds:.1f}s; {sum(r.passing for r in results)} released, "
        f"{sum(r.status == 'fallback' for r in results)} replaced by the fallback; "
        f"{usage / len(results):.0f} tokens per passage (chain + detector, tiktoken counts)"
    )

    _rule("Recorded: the guard against the human labels (non-factual = positive class)")
    gold = [p.is_hallucinated for p in passages]
    pred = [not r.attempts[0].passing for r in results]
    precision, recall, f1 = _prf(pred, gold)
    tp = sum(a and b for a, b in zip(pred, gold, strict=True))
    print(
        f"guard rejects {sum(pred)} of {len(pred)} passages; {sum(gold)} are non-factual "
        f"according to the annotators; {tp} rejections are right."
    )
    print(f"F1 {100 * f1:.1f}   precision {100 * precision:.1f}   recall {100 * recall:.1f}")
    if len(passages) == 146:
        print("(published rules on this 146-passage split: F1 60.0, P 50.0, R 75.0)")
    by_domain: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for p, g, q in zip(passages, gold, pred, strict=True):
        by_domain[p.domain].append((q, g))
    for domain in sorted(by_domain):
        pairs = by_domain[domain]
        _, _, f = _prf([q for q, _ in pairs], [g for _, g in pairs])
        print(f"  {domain:<11} F1 {100 * f:5.1f}  ({len(pairs)} passages)")

    _rule("Recorded: the callback handler's log (background scoring, Reverse Validation QG)")
    assert monitor.close(timeout=120)
    summary = monitor.summary()
    _say(
        "The same chain carries a TruthGuardCallbackHandler. It captured every passage the "
        "chain produced, scored it off the request path with the question-generation variant "
        f"of Reverse Validation, and wrote one JSON line per passage to {log_path}."
    )
    lines = log_path.read_text(encoding="utf-8").splitlines()
    print()
    for line in lines[:2]:
        rec = json.loads(line)
        shown = {
            k: rec[k] for k in ("run_id", "parent_run_id", "status", "label", "score", "passing")
        }
        shown["question"] = rec["question"]
        shown["answer"] = _short(rec["answer"], 60)
        print("  " + json.dumps(shown))
    print(f"  ... {len(lines)} lines in total")
    print()
    rate = summary["pass_rate"]
    shown_rate = "n/a" if rate is None else f"{100 * rate:.1f}%"
    print(
        f"summary: {summary['count']} records, {summary['scored']} scored, "
        f"{summary['failed']} failed, pass rate {shown_rate}, labels {summary['labels']}"
    )
    records = {json.loads(line)["question"]: json.loads(line) for line in lines}
    qg_pred = [records[i["question"]]["passing"] is False for i in inputs]
    _, _, qg_f1 = _prf(qg_pred, gold)
    print(f"the monitor's own F1 against the human labels: {100 * qg_f1:.1f}")


# -- offline: FEWL example selector over RefChecker --------------------------------------------


def _refchecker_panel(args: argparse.Namespace) -> tuple[list[str], dict[str, dict[str, Any]]]:
    from truthguard.datasets import REFCHECKER_MODELS, load_refchecker

    by_id: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in load_refchecker("zero_context", args.data):
        by_id[r.id][r.model] = r
    complete = [
        qid
        for qid, answers in by_id.items()
        if set(answers) == set(REFCHECKER_MODELS)
        and all(a.response.strip() and a.claims for a in answers.values())
    ]
    return complete, by_id


def _selector_section(args: argparse.Namespace, out_dir: Path) -> None:
    from langchain_core.prompts import FewShotPromptTemplate, PromptTemplate

    from truthguard._sync import run_sync
    from truthguard.datasets import REFCHECKER_MODELS
    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.fewl import FEWL
    from truthguard.selectors import FEWLExampleSelector
    from truthguard.similarity import get_default_similarity
    from truthguard.store import ArtifactStore
    from truthguard.testing import ReplayChatModel

    ids, by_id = _refchecker_panel(args)
    ids = _spread(ids, None if args.limit is None else max(args.limit, 4))
    proxy_model = "chatgpt"  # its answers restate the question most often
    candidates = [m for m in REFCHECKER_MODELS if m != proxy_model]

    def norm(text: str) -> str:
        return " ".join(text.split())

    proxy = {qid: norm(by_id[qid][proxy_model].response) for qid in ids}
    qid_of = {text: qid for qid, text in proxy.items()}

    _rule("Recorded: the FEWL example selector on the RefChecker multi-LLM answers")
    _say(
        f"RefChecker recorded {len(REFCHECKER_MODELS)} LLMs answering the same Natural "
        f"Questions, with human labels on every claim. For {len(ids)} questions, the candidate "
        f"answers are those of {', '.join(candidates)}. Each candidate is scored by FEWL "
        "against the other six models' recorded answers to the same question (the reference "
        "panel: uniform weights, laziness penalty over 5 neighbour questions), so no model is "
        "called. RefChecker ships no question texts, so ChatGPT's answer (which usually restates "
        "the question) stands in for each question, both for FEWL and for the selector's "
        f"similarity search. The baseline takes the first candidate ({candidates[0]})."
    )

    def key_fn(prompt: str, metadata: Any) -> Any:
        return qid_of.get(norm(str(metadata.get("fewl_question", ""))))

    replays = {
        m: ReplayChatModel(
            model_name=m,
            recordings={qid: by_id[qid][m].response for qid in ids},
            key_fn=key_fn,
            report_usage=False,
        )
        for m in REFCHECKER_MODELS
    }
    similarity = get_default_similarity()
    store = ArtifactStore.in_memory(embedder=similarity)
    store.add_questions(list(proxy.values()))
    scorers = {
        m: FEWL(
            reference_models=[replays[o] for o in REFCHECKER_MODELS if o != m],
            mode="panel",
            expertise="uniform",
            penalty=True,
            k_neighbors=5,
            threshold=0.0,  # scores are only compared; a threshold spares the IW/CO generation
            similarity=similarity,
            store=store,
        )
        for m in candidates
    }

    scored: dict[str, list[float | None]] = {}

    async def panel_scores(question: str, answers: list[str]) -> list[float | None]:
        # candidate i was written by candidates[i]; its panel leaves that model out
        out = []
        for model, answer in zip(candidates, answers, strict=True):
            result = await scorers[model].ainvoke({"question": question, "answer": answer})
            out.append(result.score)
        scored[qid_of[norm(question)]] = out
        return out

    held_out = ids[-1]
    pool_ids = ids[:-1]
    examples = [
        {"question": proxy[q], "answers": [by_id[q][m].response for m in candidates], "id": q}
        for q in pool_ids
    ]
    started = time.perf_counter()
    selector = run_sync(
        FEWLExampleSelector.afrom_examples(
            examples, SimilarityEmbeddings(similarity), scorer=panel_scores, k=2
        )
    )
    seconds = time.perf_counter() - started

    # How good are the chosen answers by the human claim labels?
    chosen = defaultdict(list)
    wins = ties = 0
    for qid, scores in scored.items():
        valid = [(s, -i) for i, s in enumerate(scores) if s is not None]
        if not valid:
            continue
        best = -max(valid)[1]  # the selector's rule: highest score, first on ties
        rates = [by_id[qid][m].rate("Contradiction") for m in candidates]
        chosen["fewl"].append(rates[best])
        chosen["first"].append(rates[0])
        chosen["mean"].append(statistics.mean(r for r in rates if r is not None))
        wins += rates[best] < rates[0]
        ties += rates[best] == rates[0]
    n = len(chosen["fewl"])
    fewl, first, mean = (statistics.mean(chosen[k]) for k in ("fewl", "first", "mean"))
    baseline = f"baseline ({candidates[0]})"
    print()
    print(f"{len(examples)} pool questions scored in {seconds:.1f}s; human contradiction rate:")
    print(f"  {'FEWL-best answer':<28}{100 * fewl:5.1f}%")
    print(f"  {baseline:<28}{100 * first:5.1f}%")
    print(f"  {'average candidate':<28}{100 * mean:5.1f}%")
    print(f"  FEWL-best better than the baseline on {wins} of {n} questions, equal on {ties}")
    _say(
        f"On these {n} questions the FEWL pick is {'less' if fewl < mean else 'not less'} "
        f"contradicted than an average candidate, and {'less' if fewl < first else 'not less'} "
        f"than always taking {candidates[0]}'s answer."
    )

    query = {"question": proxy[held_out]}
    print()
    print(
        f"Selecting 2 exemplars for a held-out question (stand-in): {_short(query['question'], 70)}"
    )
    prompt = FewShotPromptTemplate(
        example_selector=selector,
        example_prompt=PromptTemplate.from_template("Q: {question}\nA: {answer}"),
        suffix="Q: {question}\nA:",
        input_variables=["question"],
    )
    for mode in ("fewl", "baseline"):
        selector.mode = mode
        picked = selector.select_examples(query)
        print(f"  {mode}:")
        for ex in picked:
            qid = qid_of[ex["question"]]
            model = next(m for m in candidates if by_id[qid][m].response == ex["answer"])
            rate = by_id[qid][model].rate("Contradiction")
            print(
                f"    [{model}, {100 * (rate or 0):.0f}% contradicted] {_short(ex['answer'], 70)}"
            )
    selector.mode = "fewl"
    text = prompt.format(**query)
    print()
    print("The few-shot prompt the FEWL selector builds (inside a FewShotPromptTemplate):")
    print(
        textwrap.indent(_short(text, 600).replace(" Q: ", "\nQ: ").replace(" A: ", "\nA: "), "  ")
    )


def run_offline(args: argparse.Namespace) -> int:
    """The offline demo: the packaged corpus, then the recorded benchmarks whose data is there."""
    from truthguard.errors import DatasetNotFoundError

    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="truthguard-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print(
        "Mode: OFFLINE. No model is called: scripted replies over the corpus shipped with "
        "truthguard, then recordings of real LLMs on public benchmarks when their data is there."
    )
    started = time.perf_counter()
    _embedded_section(out_dir)
    skipped: list[str] = []
    for name, section in RECORDED_SECTIONS:
        try:
            section(args, out_dir)
        except DatasetNotFoundError as e:
            skipped.append(name)
            logger.debug("demo section %s skipped: %s", name, e)
    print()
    if skipped:
        print(
            f"Skipped the recorded-benchmark sections ({', '.join(skipped)}): "
            + (
                f"no data in {args.data}"
                if args.data
                else "their data is not on this machine and could not be downloaded"
            )
            + "; pass --data DIR or set TRUTHGUARD_DATA_DIR to a folder holding phd/ and "
            "refchecker/, or run once with network access (the data is downloaded into "
            "~/.cache/truthguard/data)."
        )
    print(f"Demo finished in {time.perf_counter() - started:.0f}s (mode: offline).")
    return 0


RECORDED_SECTIONS = (("PHD guard", _phd_section), ("RefChecker selector", _selector_section))
"""The demo sections that need benchmark data (name, function), in order."""


# -- live ------------------------------------------------------------------------------------------


def live_model_from_env() -> Any | None:
    """A ``ChatOpenAI`` from ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``; None when both are unset."""
    key, base = os.environ.get("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL")
    if not key and not base:
        return None
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as e:  # pragma: no cover - depends on the environment
        from truthguard.errors import ConfigurationError

        raise ConfigurationError(
            "the live demo needs langchain-openai: pip install 'truthguard[openai]'"
        ) from e
    return ChatOpenAI(
        model=os.environ.get("TRUTHGUARD_LIVE_MODEL", "gpt-4o-mini"),
        api_key=key or "not-needed",  # local OpenAI-compatible servers often ignore the key
        base_url=base or None,
        temperature=0.0,
        timeout=60,
    )


def run_live(args: argparse.Namespace, model: Any) -> int:
    """The live demo: a guarded RAG chain over the shipped corpus, on ``model``."""
    from truthguard.callbacks import JSONLSink, TruthGuardCallbackHandler
    from truthguard.guard import Fallback, HallucinationGuard, Regenerate, ReRetrieve
    from truthguard.rag import build_rag_chain, chroma_retriever, corpus_documents
    from truthguard.refchecker import RefChecker

    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="truthguard-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    name = getattr(model, "model_name", None) or type(model).__name__
    print(f"Mode: LIVE. Model {name}; corpus shipped with truthguard.")
    docs = corpus_documents()
    log_path = out_dir / "truthguard_live_scores.jsonl"
    handler = TruthGuardCallbackHandler(RefChecker(threshold=0.5), sinks=[JSONLSink(log_path)])
    chain = build_rag_chain(chroma_retriever(docs, k=2), model)
    guard = HallucinationGuard(
        chain=chain,
        detectors=[RefChecker(threshold=0.5)],
        policies=[
            ReRetrieve(k=[5]),
            Regenerate(),
            Fallback(answer="I cannot answer that reliably from the documents I have."),
        ],
    )
    questions = LIVE_QUESTIONS[: args.limit] if args.limit else LIVE_QUESTIONS
    _rule(f"A guarded RAG chain over the corpus ({len(docs)} passages)")
    _say(
        "Each answer is checked claim by claim against the retrieved passages (RefChecker, "
        "local checker). A failing answer is retried with more passages, then regenerated with "
        "the checker's notes, then replaced by a fixed reply."
    )
    failures = 0
    for q in questions:
        try:
            r = guard.invoke({"question": q}, {"callbacks": [handler]})
        except Exception as e:  # a failing model: say so and go on, never a traceback
            failures += 1
            print()
            print(f"Q: {q}")
            print(f"   model error: {_short(f'{type(e).__name__}: {e}', 300)}")
            continue
        steps = " -> ".join(
            f"{a.policy or 'first'}:{'pass' if a.passing else 'fail' if a.verdict else 'unchecked'}"
            for a in r.attempts
        )
        print()
        print(f"Q: {q}")
        print(f"A: {_short(r.answer, 300)}")
        print(f"   guard: {r.status}; attempts {steps}; {r.usage.total_tokens} tokens")
    handler.close(timeout=120)
    s = handler.summary()
    print()
    print(f"Callback log: {log_path} ({s['count']} records, pass rate {s['pass_rate']})")
    try:
        _live_selector(model)
    except Exception as e:
        failures += 1
        print(f"   model error: {_short(f'{type(e).__name__}: {e}', 300)}")
    print()
    if failures:
        print(f"{failures} step(s) failed because the model did; check the model settings.")
    print("Demo finished (mode: live).")
    return 0


def _live_selector(model: Any) -> None:
    from truthguard._sync import run_sync
    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.fewl import FEWL
    from truthguard.selectors import FEWLExampleSelector, icl_prompt

    _rule("The FEWL example selector, with the live model as reference")
    _say(
        f"{len(LIVE_POOL)} pool questions each have a right and a wrong candidate answer. FEWL "
        "scores both against the model's own answer (one reference call per question, no "
        "penalty), and the selector keeps the better one as the few-shot answer."
    )
    fewl = FEWL(
        reference_models=[model], mode="single", expertise="uniform", penalty=False, threshold=0.0
    )
    selector = run_sync(
        FEWLExampleSelector.afrom_examples(
            list(LIVE_POOL), SimilarityEmbeddings(), scorer=fewl, k=2, include_score=True
        )
    )
    query = {"question": "Which planet is red, and why?"}
    print()
    for ex in selector.select_examples(query):
        print(f"  [{ex['fewl_score']:+.3f}] {ex['question']} -> {ex['answer']}")
    answer = (icl_prompt(selector) | model).invoke(query)
    print(f"Q: {query['question']}")
    print(f"A: {_short(getattr(answer, 'content', str(answer)), 300)}")


def run(args: argparse.Namespace) -> int:
    if getattr(args, "limit", None) is not None and args.limit < 1:
        print("--limit must be at least 1")
        return 2
    if args.live:
        model = live_model_from_env()
        if model is None:
            print(
                "Mode: LIVE requested, but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set. "
                "Set one (OPENAI_BASE_URL for any OpenAI-compatible server), or run "
                "`truthguard demo` without --live for the offline demo."
            )
            return 2
        return run_live(args, model)
    return run_offline(args)
