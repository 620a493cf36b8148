"""What the REPL makes behind its first prompt: the settings, the session, the command modules' commands, the
warm-up.

The prompt is drawn first: loading the config (pydantic), opening the session (the tool specs, the trace, the
session index; for a LiteLLM model, LiteLLM itself to ask whether it calls tools natively) and loading the
workflows cost more than everything before the prompt together. `Startup.start()` does all of it in one background
thread once the prompt is on screen, while the user types; the first line sent waits for it (`get()`). A failure
(a bad config file, no model, a missing workspace or session to resume) is raised by `get()` and handed to
`on_error` at once, so the REPL ends with that error's one line and exit code.

One session is left to the foreground: the bundled local model's first use assembles and checks its 1 GiB file
with a progress bar, which must not draw over the prompt; that session opens when the first line is sent
(`get()` in the main thread, the prompt gone), progress bar and all.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cli_agent.config import Loaded, Settings
    from cli_agent.history import SessionEntry
    from cli_agent.session import ProviderFactory, Session

class Startup:
    """The session and what comes with it, made by `start()` in a background thread, or given ready (`session=`).

    `load` gives the layered settings; `resume` is the session to continue (session_index.LATEST or an id), given to the
    new session before its first run. `settings`, `session` and `resumed` (the continued session's index entry) are
    None until made. `foreground(settings)`: True when opening the session draws on the terminal, so the background
    thread leaves it to `get()` (default: the local model's one-time set-up)."""

    def __init__(self, load: Callable[[], Loaded] | None = None, provider_factory: ProviderFactory | None = None,
                 *, session: Session | None = None, resume: str | None = None,
                 foreground: Callable[[Settings], bool] | None = None) -> None:
        self.load = load
        self.provider_factory = provider_factory
        self.resume = resume
        self.foreground = foreground or _local_setup_pending
        self.session = session
        self.settings: Settings | None = session.settings if session is not None else None
        self.resumed: SessionEntry | None = None
        self.notes: tuple[str, ...] = ()  # the loader's warnings, for the banner
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._closing = False
        if session is not None:
            self._done.set()

    @property
    def ready(self) -> bool:
        """The settings are loaded, the session is open (or left to the foreground) or failed to open, and the
        `then` hook of `start()` has run."""
        return self._done.is_set()

    def start(self, then: Callable[[], None] = lambda: None,
              on_error: Callable[[BaseException], None] = lambda exc: None,
              on_ready: Callable[[], None] = lambda: None) -> None:
        """Load the settings and open the session in a background thread, then run `then()` there (still before
        `ready`); then `on_ready()`, and the warm-up for the first turn. A failure goes to `on_error` and to whoever
        calls `get()`. Does nothing when started or given a session already."""
        if self.ready or self._thread is not None:
            return

        def opening() -> None:
            try:
                assert self.load is not None
                loaded = self.load()
                self.settings, self.notes = loaded.settings, loaded.notes
                if not self.foreground(self.settings):
                    self._open()
                then()
            except BaseException as exc:  # handed to the main thread, which raises it
                self.error = exc
                self._done.set()
                on_error(exc)
                return
            self._done.set()
            on_ready()
            if not self._closing and self.session is not None:
                preload(self.session.provider)

        self._thread = threading.Thread(target=opening, name="startup", daemon=True)
        self._thread.start()

    def _open(self) -> Session:
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.session import default_provider_factory, open_session

        settings = self.settings
        assert settings is not None
        self.provider_factory = self.provider_factory or default_provider_factory
        resumed = None
        if self.resume is not None:
            # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
            from cli_agent.history import load_resumable

            resumed = load_resumable(settings.workspace, self.resume)
        session = open_session(settings, interactive=True,
                               provider_factory=self.provider_factory, notes=self.notes)
        if resumed is not None:
            # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
            from cli_agent.session import resume_into

            try:
                resume_into(session, *resumed)
            except BaseException:
                session.close()
                raise
            self.resumed = resumed[0]
        self.settings, self.session = session.settings, session  # its settings: the model it defaulted to
        return session

    def get(self) -> Session:
        """The session, waiting for it if it is still being made (started here if it was not yet)."""
        if not self.ready:
            self.start()
            self._done.wait()
        if self.error is not None:
            raise self.error
        if self.session is None:  # left to the foreground
            try:
                self._open()
            except KeyboardInterrupt:  # the user stopped waiting: the next line tries again
                raise
            except BaseException as exc:
                self.error = exc
                raise
        assert self.session is not None
        return self.session

    def close(self, timeout: float = 10.0) -> None:
        """Let a start still under way end (so the session it opens is closed, not cut off, and no thread is left
        importing while the interpreter shuts down: that can deadlock on the import lock), then close the
        session; a failure stays in `error`."""
        self._closing = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self.session is not None:
            self.session.close()


def _local_setup_pending(settings: Settings) -> bool:
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.providers import setup_pending

    return setup_pending(settings)


def _preloader(provider: Any) -> Callable[[], Any] | None:
    """What imports the provider's modules: LiteLLM's `preload` for a LiteLLM model, else the provider's own (the
    HTTP transport's httpx); None when it needs nothing (the scripted one)."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.providers import litellm_provider

    owner = litellm_provider if isinstance(provider, litellm_provider.LiteLLMProvider) else provider
    return getattr(owner, "preload", None)


def preload(provider: Any) -> None:
    """Import what the first turn needs: the provider's modules (`_preloader`), then the renderer's Rich modules.
    Quietly: the first request reports a broken install properly."""
    load = _preloader(provider)
    with contextlib.suppress(Exception):
        if load is not None:
            load()
        import rich.live  # deferred: Rich is not on a one-shot run's path
        import rich.markdown  # deferred: Rich's Markdown, when an answer is first drawn
        import rich.spinner  # noqa: F401


def warm_up(provider: Any, load: Callable[[], Any] | None = None) -> threading.Thread | None:
    """`preload` in a background thread (or `load` instead); None when the provider needs nothing loaded (the
    scripted one)."""
    if load is None and _preloader(provider) is None:
        return None

    def quietly() -> None:
        with contextlib.suppress(Exception):
            load() if load is not None else preload(provider)

    thread = threading.Thread(target=quietly, name="preload", daemon=True)
    thread.start()
    return thread
