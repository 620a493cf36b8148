"""The bundled offline model: llama.cpp's own server (the `xllamacpp` wheel) on 127.0.0.1, warm for a session.

    provider = LocalProvider(settings.local)   # files verified, server starting in the background
    for item in provider.stream(request): ...  # waits once until the server answers, then plain OpenAI HTTP
    provider.close()                           # the server's whole process group is stopped

`LlamaServer` owns the child process `python -m cli_agent.providers.local_engine`: its own process group (so a
Ctrl-C at the terminal reaches only us, and `stop` can end everything it spawned), `PR_SET_PDEATHSIG` on Linux so
the kernel kills it if we die without cleaning up (kill -9, a crash), and an `atexit` hook for an exit that skips
`close`.
SIGTERM and Ctrl-C unwind through the session's `close`. Requests go through `OpenAIHTTPProvider` (plain httpx).

Native tool calls through llama.cpp are unreliable, so the session uses the json protocol with constrained
decoding: the plan's options carry `response_format={"type": "json_object", "schema": ...}` (see session.py).
Every request is streamed, pinned to the server's one slot with its prompt cache on (`id_slot`, `cache_prompt`),
with the sampling parameters set here rather than left to the runtime's defaults. The stream is watched: a reply
whose tail repeats itself (a small model can run on inside a JSON string until the token limit) is cut there and
ends as a reply cut off (`finish_reason: length`, its usage from llama.cpp's per-token `timings`), which the loop
treats as malformed. The reply's usage carries the prompt tokens the server took from its cache. With
`local.warm_start`, the slot's state is restored from disk before the first request and saved when the session
closes after a whole reply (cli_agent.providers.warm_cache).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from cli_agent.config.settings import LocalSettings
from cli_agent.contracts.errors import ProviderError, RunTimeoutError, UsageError
from cli_agent.providers.base import END_OF_REPLY, Preferences, ProviderReply, ProviderRequest
from cli_agent.providers.local_engine import ALIAS
from cli_agent.providers.local_model import (
    ensure_model,
    install_command,
    needs_setup,
    resolve_model,
    runtime_unfit,
    runtime_version,
)
from cli_agent.providers.openai_http import OpenAIHTTPProvider, import_httpx
from cli_agent.providers.warm_cache import WarmCache

if TYPE_CHECKING:
    from pathlib import Path

    from cli_agent.config.settings import Settings

__all__ = ["CONSTRAINED_ANSWER", "KEY_VARIABLES", "LOCAL_MODEL", "SAMPLING", "LlamaServer", "LocalProvider",
           "cut_runaway", "default_to_local", "plan_key", "runs_away", "wire_options"]

LOCAL_MODEL = ALIAS
# A configured key for any of these means the user has a hosted model in mind: no silent switch to local then.
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
                 "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHERAI_API_KEY",
                 "COHERE_API_KEY", "AZURE_API_KEY", "FIREWORKS_API_KEY")
# Appended to the system prompt of the local model: its output is grammar-constrained, so it cannot answer in
# plain text as the json protocol's prompt says, and without this it never stops (it keeps calling tools).
CONSTRAINED_ANSWER = """
Your replies are JSON only: plain text is not possible. To answer, or when the task is done, reply with
{"tool": "answer", "parameters": {"text": "<the answer, or what you changed>"}, "terminate": true}
Once a change has succeeded, do not change it again or undo it: answer.
"""
LOAD_TIMEOUT_S = 180.0  # from start to the first answer, on a cold disk
MAX_TOKENS = 2048  # a constrained reply that never closes its JSON still ends
_PLAN_ONLY = ("model", "protocol")  # plan options that describe the request, not wire parameters
# Sampling set here, not left to the runtime's defaults (which differ between llama.cpp releases): greedy, with
# the samplers that could reorder a greedy choice turned off. A request's own options (temperature ...) win.
SAMPLING: dict[str, Any] = {"temperature": 0.0, "top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0,
                            "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0, "seed": 0}
RUNAWAY_CHARS = 512  # a reply whose last RUNAWAY_CHARS characters repeat one unit of at most RUNAWAY_PERIOD ...
RUNAWAY_PERIOD = 32  # ... characters (16 times or more) has run away: it is cut there
_SAVE_TIMEOUT_S = 15.0  # a state of a full 8k context is ~230 MB: written in about a second
_PR_SET_PDEATHSIG = 1
_RUNTIME_FAILED = 3  # local_engine's exit code when xllamacpp does not import
_ERROR_LINE = re.compile(r"^\S+ E (.*)$")  # llama.cpp's log: `0.00.003.923 E llama_model_load: error ...`


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
    import hashlib

    st = path.stat()
    return hashlib.sha256(f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_threads() -> int:
    """Half the cores, as llama.cpp does: its threads spin at each step, and on a busy machine two of them on two
    cores ran 10-15 times slower than one (measured with SmolLM2 while tests ran alongside)."""
    return max(1, _cores() // 2)


def default_batch_threads(load: Callable[[], tuple[float, float, float]] | None = None) -> int:
    """Threads for evaluating a prompt (compute-bound, so it scales with cores): the cores this process may use
    that the machine's one-minute load leaves idle, at least one."""
    cores = _cores()
    try:
        busy = (load or os.getloadavg)()[0]
    except OSError:
        busy = 0.0
    return max(1, min(cores, cores - int(busy)))


def runs_away(text: str) -> bool:
    """The reply's tail is one short unit repeated over RUNAWAY_CHARS characters (`\\t\\t\\t...`, `ababab...`)."""
    if len(text) < RUNAWAY_CHARS:
        return False
    tail = text[-RUNAWAY_CHARS:]
    return any(tail[period:] == tail[:-period] for period in range(1, RUNAWAY_PERIOD + 1))


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn asking the kernel to SIGKILL the child when this thread's process dies (Linux only).
    The death signal follows the thread that forked: start the server from the main thread."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # we died between fork and prctl
            os._exit(1)

    return preexec


class LlamaServer:
    """One llama.cpp server child (`local_engine`) on 127.0.0.1 at a free port."""

    def __init__(self, model_path: Path, *, threads: int, context_size: int, batch_threads: int | None = None,
                 cache: WarmCache | None = None) -> None:
        self.model_path = model_path
        self.cache = cache
        self.threads = threads
        self.batch_threads = batch_threads or threads
        self.context_size = context_size
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._ready = False

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ready(self) -> bool:
        """It answered, and has not been stopped since."""
        return self._ready and self.process is not None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def command(self) -> list[str]:
        return [sys.executable, "-m", "cli_agent.providers.local_engine", "--model", str(self.model_path),
                "--port", str(self.port), "--ctx", str(self.context_size), "--threads", str(self.threads),
                "--batch-threads", str(self.batch_threads)] + (
                ["--slot-save-path", str(self.cache.folder)] if self.cache else [])

    def start(self) -> None:
        """Start the child and return at once; `wait_ready` waits for it to answer."""
        if self.process is not None:
            return
        self.port = _free_port()
        self._log = tempfile.TemporaryFile(prefix="cli-agent-llama-")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_die_with_parent(), env=os.environ | {"PYTHONUNBUFFERED": "1"})
        atexit.register(self.stop)

    def wait_ready(self, timeout_s: float) -> None:
        """Poll `/health` until it answers; a child that exits, or no answer in time, is an error. A port taken
        between choosing it and binding it (another program was quicker) is chosen again, twice at most."""
        if self._ready:
            return
        httpx = import_httpx()  # without httpx's command-line client (click, rich, pygments)
        if self.process is None:
            self.start()
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        rebinds = 2
        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while True:
                if self.process.poll() is not None and rebinds and "couldn't bind" in self.log_tail(20):
                    rebinds -= 1
                    self.stop()
                    self.start()
                    assert self.process is not None
                    continue
                if self.process.poll() is not None:
                    fix = ""
                    if self.process.returncode == _RUNTIME_FAILED:
                        fix = "; " + (runtime_unfit() or f"reinstall the runtime: {install_command()}")
                    raise ProviderError(f"the local model server exited with code {self.process.returncode} "
                                        f"while loading {self.model_path.name}: {self.log_tail()}{fix}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.base}/health").status_code == 200:
                        self._ready = True
                        return
                if time.monotonic() >= deadline:
                    raise ProviderError(f"the local model server did not answer within {timeout_s:.0f}s: "
                                        f"{self.log_tail()}")
                time.sleep(0.05)

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise ProviderError(f"the local model server stopped (exit code {self.process.returncode}): "
                                f"{self.log_tail()}")

    def log_tail(self, lines: int = 6) -> str:
        """The server's last words on one line: llama.cpp's error lines (`... E message`) and the child's own
        `local_engine:` line when there are any, else its last lines."""
        if self._log is None:
            return "no log"
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            text = self._log.read()[-16000:].decode("utf-8", errors="replace")
            all_lines = [line.strip() for line in text.splitlines() if line.strip()]
            errors = [match.group(1) for line in all_lines if (match := _ERROR_LINE.match(line))]
            errors += [line for line in all_lines if line.startswith("local_engine:")]
            tail = list(dict.fromkeys(errors))[-lines:] or all_lines[-lines:]
            return " | ".join(tail) or "no output"
        return "no log"

    def slot(self, action: str, filename: str) -> bool:
        """`POST /slots/0?action=save|restore` with a file name under the server's slot_save_path; True if done."""
        httpx = import_httpx()
        try:
            with httpx.Client(trust_env=False, timeout=_SAVE_TIMEOUT_S) as client:
                answer = client.post(f"{self.base}/slots/0", params={"action": action}, json={"filename": filename})
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def stop(self, grace_s: float = 1.0) -> None:
        """SIGTERM the child's process group, SIGKILL it after `grace_s`; safe to call more than once."""
        atexit.unregister(self.stop)
        process, self.process, self._ready = self.process, None, False
        if process is not None and process.poll() is None:  # still ours: its group id cannot have been reused
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


class LocalProvider:
    """The Provider for `--model local`: verifies the model file, starts the server, and talks OpenAI HTTP to it.
    Native tool calls through llama.cpp are unreliable: it asks for the json protocol, constrained by a schema,
    with the compact prompt (which stays the same across steps, so the slot's prompt cache holds) at
    temperature 0."""

    preferences = Preferences(protocol="json", options={"temperature": 0.0}, detail="compact",
                              constrained_json=True)

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
        self.server = LlamaServer(self.model_path, threads=local.threads or default_threads(),
                                  context_size=local.context_size,
                                  batch_threads=local.threads or default_batch_threads(), cache=self.cache)
        self.server.start()
        httpx = import_httpx()
        # A new connection for each request: the server closes an idle one after 5 s, and a request sent on a
        # connection it is closing fails ("Server disconnected"); on loopback a connection costs nothing.
        transport = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        self._http = OpenAIHTTPProvider(f"openai/{LOCAL_MODEL}", api_base=self.server.api_base,
                                        context_window=local.context_size, transport=transport)

    def supports_native_tools(self) -> bool:
        return False

    def context_window(self) -> int | None:
        return self._http.context_window()

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        return self._http.request_body(self._wire(request))

    def _wire(self, request: ProviderRequest) -> ProviderRequest:
        """The request as the server takes it: streamed (the server sends the usage in its last chunk), pinned to
        slot 0 with its prompt cache, its sampling explicit, its length bounded."""
        return replace(request, options=wire_options(request.options), stream=True)

    def stream(self, request: ProviderRequest) -> Iterator[str | ProviderReply]:
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
        if self._plan is None:
            self._plan = plan_key(request)
            self._restore()
        left = None if request.timeout_s is None else max(0.0, request.timeout_s - (time.monotonic() - started))
        self._settled = False
        try:
            for item in self._http.stream(replace(self._wire(request), timeout_s=left), watch=cut_runaway):
                self._settled = isinstance(item, ProviderReply)
                yield item
        except ProviderError:
            self.server.check_alive()  # a dead server says so instead of a retryable connection error
            raise

    def _restore(self) -> None:
        """Load the saved state of this plan into the slot; a file the server cannot load is removed."""
        if self.cache is None or self._plan is None:
            return
        name = self.cache.slot_file(self._plan)
        if self.cache.has(name) and not self.server.slot("restore", name):
            self.cache.discard(name)

    def save(self) -> bool:
        """Save the slot's state for the next process (to a temporary name, renamed once whole)."""
        if self.cache is None or self._plan is None or not self._settled or not self.server.ready:
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


def wire_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's options as the server takes them: sampling explicit (SAMPLING, under the plan's own), the length
    bounded, pinned to slot 0 with its prompt cache, and llama.cpp's timings in every chunk."""
    wire = SAMPLING | {k: v for k, v in options.items() if k not in _PLAN_ONLY}
    wire.setdefault("max_tokens", MAX_TOKENS)
    return wire | {"id_slot": 0, "cache_prompt": True, "timings_per_token": True}


def plan_key(request: ProviderRequest) -> str:
    """The fingerprint of what every request of a run starts with: the system prompt and the constrained schema."""
    import hashlib
    import json

    system = next((m.content for m in request.messages if m.role == "system"), "")
    plan = {"system": system, "response_format": request.options.get("response_format"),
            "tools": request.tools}
    return hashlib.sha256(json.dumps(plan, sort_keys=True, default=str).encode("utf-8", "surrogatepass")).hexdigest()


def cut_runaway(chunks: Iterator[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The server's chunks as they come, until the reply's text runs away (runs_away): then the connection is
    closed (the server stops generating) and the reply ends there, cut off (`finish_reason: length`). Its usage so
    far comes from the chunks' llama.cpp `timings`."""
    tail = ""
    for chunk in chunks:
        yield chunk
        for choice in chunk.get("choices") or ():
            tail = (tail + ((choice.get("delta") or {}).get("content") or ""))[-RUNAWAY_CHARS:]
        if runs_away(tail):
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
            yield END_OF_REPLY
            return
