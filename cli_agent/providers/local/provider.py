"""The bundled offline model: llama.cpp's own server (the `xllamacpp` wheel) on 127.0.0.1, warm for a session.

    provider = LocalProvider(settings.local)   # files verified, server starting in the background
    for item in provider.stream(request): ...  # waits once until the server answers, then plain OpenAI HTTP
    provider.close()                           # the server's whole process group is stopped

`LlamaServer` (local/server.py) owns the child process `python -m cli_agent.providers.local.engine`.
SIGTERM and Ctrl-C unwind through the session's `close`. Requests go through `OpenAIHTTPProvider` (plain httpx).

Native tool calls through llama.cpp are unreliable, so the session uses the json protocol with constrained
decoding: the plan's options carry `response_format={"type": "json_object", "schema": ...}`, and the system prompt
says how to answer in JSON (`Preferences.constrained_answer`), both added by prompt/plan.py.
Every request is streamed, pinned to the server's one slot with its prompt cache on (`id_slot`, `cache_prompt`),
with the sampling parameters set rather than left to the runtime's defaults, and the stream is watched for a reply
that runs away (local/reply.py). The reply's usage carries the prompt tokens the server took from its
cache. With `local.warm_start`, the slot's state is restored from disk before the first request and saved when the
session closes after a whole reply (local/warm_cache.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from cli_agent.config import LocalSettings, Settings
from cli_agent.contracts import ProviderError, RunTimeoutError, UsageError
from cli_agent.providers.base import Preferences, ProviderReply, ProviderRequest, Thinking
from cli_agent.providers.local.kept import keep_warm_seconds
from cli_agent.providers.local.model import ensure_model, install_command, needs_setup, resolve_model
from cli_agent.providers.local.prompt_speed import PromptSpeed, unread_chars
from cli_agent.providers.local.reply import cut_runaway, plan_key, shared_first, wire_options
from cli_agent.providers.local.runtime import runtime_unfit, runtime_version
from cli_agent.providers.local.server import ALIAS, LlamaServer, default_threads
from cli_agent.providers.local.warm_cache import WarmCache
from cli_agent.providers.openai_http import OpenAIHTTPProvider, import_httpx

__all__ = ["default_to_local", "setup_pending"]

LOCAL_MODEL = "local"  # the model string that selects the bundled model
# A configured key for any of these means the user has a hosted model in mind: no silent switch to local then.
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
                 "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHERAI_API_KEY",
                 "COHERE_API_KEY", "AZURE_API_KEY", "FIREWORKS_API_KEY")
# Appended to the system prompt of the local model (its `Preferences.constrained_answer`): its output is
# grammar-constrained, so it cannot answer in plain text as the json protocol's prompt says, and without this it
# never stops (it keeps calling tools).
CONSTRAINED_ANSWER = """
Your replies are JSON only: plain text is not possible. To answer, or when the task is done, reply with
{"tool": "answer", "parameters": {"text": "<the answer, or what you changed>"}, "terminate": true}
Once a change has succeeded, do not change it again or undo it: answer.
"""
LOAD_TIMEOUT_S = 180.0  # from start to the first answer, on a cold disk


def default_to_local(settings: Settings, env: dict[str, str] | None = None) -> tuple[Settings, str | None]:
    """The settings with `model = "local"` when no model, server or key is configured, and the note saying so."""
    env = dict(os.environ) if env is None else env
    if settings.model or settings.api_base or settings.api_key or any(env.get(k) for k in KEY_VARIABLES):
        return settings, None
    note = (f"no model or API key configured: using the bundled local model ({settings.local.model}); "
            "pass --model to use another")
    return dataclasses.replace(settings, model=LOCAL_MODEL), note


def setup_pending(settings: Settings) -> bool:
    """The settings select the local model (named, or by default) and its file still has to be assembled or checked,
    which takes seconds to a minute behind a progress bar; False when it is ready, or not the local model."""
    settings, _ = default_to_local(settings)
    if settings.model != LOCAL_MODEL or runtime_version() is None:
        return False
    try:
        return needs_setup(resolve_model(settings.local.model))
    except UsageError:  # opening the session says what is wrong
        return False


def _file_key(path: Path) -> str:
    """A user's own .gguf has no pinned sha256: its real path, size and mtime stand in for it."""
    st = path.stat()
    return hashlib.sha256(f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()


class LocalProvider:
    """The Provider for `--model local`: verifies the model file, starts the server, and talks OpenAI HTTP to it.
    Native tool calls through llama.cpp are unreliable: it asks for the json protocol, constrained by a schema
    (with the words that say how to answer then), with the compact prompt (which stays the same across steps, so
    the slot's prompt cache holds) at temperature 0."""

    preferences = Preferences(protocol="json", options={"temperature": 0.0}, detail="compact",
                              constrained_json=True, constrained_answer=CONSTRAINED_ANSWER)

    def __init__(self, local: LocalSettings | None = None, *, quiet: bool = False) -> None:
        local = local or LocalSettings()
        if runtime_version() is None:
            raise UsageError(runtime_unfit() or f"--model local needs the 'local' extra (xllamacpp, llama.cpp's "
                             f"server); install it with: {install_command()} (or pass --model to use a hosted model)")
        self.spec = resolve_model(local.model)
        self.model_path = ensure_model(self.spec, quiet=quiet)
        self.name = f"local {self.spec.name}"
        self.cache = None
        if local.warm_start:
            self.cache = WarmCache.for_model(self.spec.sha256 or _file_key(self.model_path), runtime_version() or "")
            self.cache.check()
        self._plan: str | None = None  # the plan fingerprint of the state restored (or to be saved), once known
        # The last request got its whole reply: the slot is idle. A request interrupted (Ctrl-C, SIGTERM, a time
        # budget) may still be generating, and a save would wait for it: its state is not saved.
        self._settled = False
        # The last request was of the plan: the slot holds its prefix. After another's (a rewrite candidate's own
        # prompt), a save would file that prompt under the plan's name, and the next process would start cold.
        self._ours = False
        self._saved = False  # this process has saved the plan's state once (after its first whole reply)
        # What the slot holds, as far as this process knows (`_held`: a request's prompt and reply, once whole), and
        # how fast the server reads what it does not (`first_token_seconds`), kept beside the warm start's states.
        self._held = ""
        self._speed = PromptSpeed.kept_in(self.cache.folder if self.cache is not None else None)
        threads = local.threads or default_threads()  # chosen once, by the load when the server starts
        self.server = LlamaServer(self.model_path, threads=threads, context_size=local.context_size,
                                  batch_threads=threads, cache=self.cache, speculative=local.speculative,
                                  keep_s=keep_warm_seconds(local))
        self.server.start()
        httpx = import_httpx()
        # A new connection for each request: the server closes an idle one after 5 s, and a request sent on a
        # connection it is closing fails ("Server disconnected"); on loopback a connection costs nothing.
        transport = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        self._http = OpenAIHTTPProvider(f"openai/{ALIAS}", api_base=self.server.api_base,
                                        context_window=local.context_size, transport=transport)

    def supports_native_tools(self) -> bool:
        return False

    def supports_images(self) -> bool:
        return False  # the bundled models read text only

    def context_window(self) -> int | None:
        return self._http.context_window()

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        return self._http.request_body(self._wire(request))

    def _wire(self, request: ProviderRequest) -> ProviderRequest:
        """The request as the server takes it: what every project shares first (`shared_first`), streamed (the
        server sends the usage in its last chunk), pinned to slot 0 with its prompt cache, its sampling explicit,
        its length bounded."""
        return replace(request, messages=shared_first(request.messages, CONSTRAINED_ANSWER),
                       options=wire_options(request.options), stream=True)

    def stream(self, request: ProviderRequest) -> Iterator[str | Thinking | ProviderReply]:
        started = time.monotonic()
        budget = LOAD_TIMEOUT_S if request.timeout_s is None else min(LOAD_TIMEOUT_S, request.timeout_s)
        try:
            self.server.wait_ready(budget)
        except ProviderError as exc:
            loading = self.server.process is not None and self.server.process.poll() is None
            if loading and budget == request.timeout_s:  # the run's budget ran out, not the load time
                raise RunTimeoutError(f"the run's time budget ran out ({budget:g}s) while the local model "
                                      "was loading") from exc
            raise
        self.server.check_alive()
        wired = self._wire(request)  # once a request: the plan, the restored prefix, the text sent
        plan = plan_key(wired)
        if self._plan is None:
            self._plan = plan  # the shared prefix: a project never seen restores it too
            if self._restore(_left(request.timeout_s, started)):
                self._held = _system_text(wired)
        left = _left(request.timeout_s, started)
        self._settled, self._ours = False, plan == self._plan
        prompt, held = _prompt_text(wired), self._held
        self._held = ""  # until the reply is whole, what the slot holds is not known
        sent, first = time.monotonic(), None
        try:
            for item in self._http.stream(replace(wired, timeout_s=left), watch=cut_runaway):
                first = first or time.monotonic()
                self._settled = isinstance(item, ProviderReply)
                if isinstance(item, ProviderReply):
                    self._speed.measured(unread_chars(prompt, held), first - sent)
                    self._held = prompt + item.text
                yield item
        except ProviderError:
            self.server.check_alive()  # a dead server says so instead of a retryable connection error
            raise
        if self._settled and self._ours and not self._saved:  # saved now (once): a process whose last request is
            self._saved = True                                  # not the plan's leaves it saved all the same
            self.save()

    def first_token_seconds(self, request: ProviderRequest) -> float | None:
        """How long `request` would wait for its first token: the characters of its prompt the slot does not hold,
        at the speed the server read its last long prompts (`prompt_speed`); None until that was measured once."""
        wired = self._wire(request)
        held = self._held
        if self._plan is None and self.cache is not None and self.cache.has(self.cache.slot_file(plan_key(wired))):
            held = _system_text(wired)  # the warm start restores the system prompt before the first request
        return self._speed.seconds(unread_chars(_prompt_text(wired), held))

    def _restore(self, timeout_s: float | None) -> bool:
        """Load the saved state of this plan into the slot (True when it did), waiting up to `timeout_s` (the
        request's time) for its turn: a kept server may still be reading the request the last process cut short. A
        file the server refuses to load is removed; one it had no turn for is kept for the next process."""
        if self.cache is None or self._plan is None:
            return False  # a kept server's slot too: it holds the last request's prompt, which may share nothing
        name = self.cache.slot_file(self._plan)
        if not self.cache.has(name):
            return False
        done = self.server.slot("restore", name, LOAD_TIMEOUT_S if timeout_s is None else max(1.0, timeout_s))
        if done is False:
            self.cache.discard(name)
        return bool(done)

    def save(self) -> bool:
        """Save the slot's state for the next process (to a temporary name, renamed once whole)."""
        if self.cache is None or self._plan is None or not self._settled or not self._ours or not self.server.ready:
            return False
        name = self.cache.slot_file(self._plan)
        temporary = self.cache.temporary(name)
        if not self.server.slot("save", temporary):
            self.cache.discard(temporary)
            return False
        try:
            self.cache.commit(temporary, name)
        except OSError:
            self.cache.discard(temporary)
            return False
        return True

    def close(self) -> None:
        try:
            with contextlib.suppress(Exception):  # a state not saved makes the next start cold, nothing worse
                self.save()
            self._http.close()
        finally:
            self.server.stop()


def _prompt_text(request: ProviderRequest) -> str:
    """The request's messages in order, as one text: what the slot reads, for its prefix shared with another's."""
    return "".join(f"<{m.role}>\n{m.content or ''}\n" for m in request.messages)


def _system_text(request: ProviderRequest) -> str:
    """The part of the request's text a restored state holds: its system prompt (the prefix every project shares)."""
    return _prompt_text(replace(request, messages=request.messages[:1]))


def _left(timeout_s: float | None, started: float) -> float | None:
    """Of a request's `timeout_s`, what is left since `started` (monotonic); None: no limit."""
    return None if timeout_s is None else max(0.0, timeout_s - (time.monotonic() - started))
