"""LLM plumbing shared by every detector.

A :class:`LLMSession` runs the model calls of one check (bounded, retried, timed out, counted);
:class:`LLMSettings` says how. The modules, one concept each:

* ``settings``: :class:`LLMSettings` and how many retries it means for a model;
* ``retries``: the session owns the retries (the model's twin without its client's own);
* ``identity``: :func:`as_runnable` and :func:`model_id`, a model's stable name in cache keys;
* ``messages``: the text of prompts and replies (:func:`message_text`), a reply cut short;
* ``tokens``: :func:`count_tokens` and the tap that collects the usage models report;
* ``streaming``: :func:`streams_like_invoke` and streamed chunks merged into one reply;
* ``session``: :class:`LLMSession`.
"""

from truthguard.llm.identity import ModelLike, as_runnable, model_id
from truthguard.llm.messages import message_text
from truthguard.llm.session import LLMSession
from truthguard.llm.settings import LLMSettings
from truthguard.llm.streaming import streams_like_invoke
from truthguard.llm.tokens import count_tokens

__all__ = [
    "LLMSession",
    "LLMSettings",
    "ModelLike",
    "as_runnable",
    "count_tokens",
    "message_text",
    "model_id",
    "streams_like_invoke",
]

# Pickles name a class by its module: keep the public path they have always had.
LLMSession.__module__ = __name__
LLMSettings.__module__ = __name__
