"""The settings: every key, its type, its default and its check (`checked` dataclasses), and its three spellings.

Every key has three spellings: `max_steps` in a TOML file, `--max-steps` as a flag, `CLI_AGENT_MAX_STEPS` in the
environment; the `[local]` table's keys are `local.model`, `--local-model` and `CLI_AGENT_LOCAL_MODEL`. The layers
that set them are read by `cli_agent.config.loading`; `config show` and `config paths` are `cli_agent.config.show`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal

from cli_agent.config.hook_settings import AgentType, Hook
from cli_agent.config.mcp_settings import McpServer, check_names
from cli_agent.config.permissions import PermissionRule
from cli_agent.contracts import dataclass
from cli_agent.validated import Secret, field_names, field_type, rule

__all__ = ["LocalSettings", "NetworkRules", "Settings", "mask_secret"]


@dataclass(frozen=True)
class LocalSettings:
    """The bundled offline model (`model = "local"`)."""

    model: str = "qwen2.5-coder-1.5b"  # or "smollm2-135m", or a path to a .gguf file
    threads: int | None = rule(None, ge=1)
    context_size: int = rule(8192, ge=1)
    warm_start: bool = True  # keep the evaluated prompt's state on disk for the next process (local/warm_cache.py)
    # draft-free speculative decoding (n-gram lookup) in llama.cpp's server; "off" turns it off
    speculative: Literal["ngram_simple", "ngram_mod", "off"] = "ngram_mod"
    # seconds the server stays loaded after its last use, for the next cli-agent (local/kept.py); 0: stopped at
    # exit; unset: 300, or 0 when CI is set
    keep_warm_s: int | None = rule(None, ge=0)


_PRESETS = ("python", "node", "rust", "go", "github")  # the hosts each stands for: the sandbox's network rules
_NET_RULE = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?"
                       r"|\[[0-9a-f:.]+\](:\d{1,5})?", re.IGNORECASE)


def _check_network(value: Any) -> Any:
    """`[sandbox.network] allow`: each rule a host, host:port, [IPv6]:port or *.domain."""
    if isinstance(value, Mapping):
        for text in value.get("allow", ()) or ():
            if not isinstance(text, str) or not _NET_RULE.fullmatch(text):
                raise ValueError(f"{text!r} is not a host, host:port or *.domain (as in \"*.pythonhosted.org\", "
                                 f"\"localhost:3141\")")
        for name in value.get("presets", ()) or ():
            if name not in _PRESETS:
                raise ValueError(f"unknown preset {name!r}: the presets are {', '.join(_PRESETS)}")
    return value


@dataclass(frozen=True)
class NetworkRules:
    """`[sandbox.network]`: the hosts commands may reach through the proxy (none by default)."""

    allow: list[str] = field(default_factory=list)  # "pypi.org", "*.pythonhosted.org", "localhost:3141"
    presets: list[Literal["python", "node", "rust", "go", "github"]] = field(default_factory=list)


@dataclass(frozen=True)
class SandboxSettings:
    """The command sandbox (`run_command`, `!COMMAND`). User config only: a project can't widen it."""

    mode: Literal["auto", "off"] = "auto"  # "off": no sandbox; every command is asked for and runs unconfined
    # true: commands share the host's whole network; a table ([sandbox.network] allow, presets): through the proxy
    network: bool | NetworkRules = rule(False, before=_check_network)
    read_paths: list[str] = field(default_factory=list)  # more folders commands may read
    write_paths: list[str] = field(default_factory=list)  # folders commands may write directly (not staged)
    env_allow: list[str] = field(default_factory=list)  # variables passed to commands beyond the base (NAME, PREFIX*)


@dataclass(frozen=True)
class WebSettings:
    """web_fetch. User config only: a project can't widen it."""

    allow_private: bool = False  # let web_fetch reach loopback, private and link-local addresses (a local dev server)


@dataclass(frozen=True)
class Settings:
    """The effective settings. Values are checked where they come in (`config.loading`, by pydantic: `checked`);
    constructing one directly checks nothing."""

    model: str | None = None
    api_base: str | None = None
    api_key: Secret | None = None
    workspace: str = "."
    yes: bool = False
    approval: Literal["ask", "edits", "all"] = "ask"
    mode: Literal["default", "plan", "edits", "all"] | None = None  # --mode: approval's modes, and plan (read only)
    protocol: Literal["auto", "native", "json"] = "auto"
    max_steps: int = rule(20, ge=1)
    timeout: float = rule(300.0, gt=0)
    max_tokens_total: int | None = rule(None, ge=1)
    max_cost_usd: float | None = rule(None, ge=0)
    output: Literal["text", "json", "stream-json"] = "text"
    trace: str | None = None
    no_tools: bool = False
    system_prompt: str | None = None
    temperature: float | None = rule(None, ge=0)
    detail: Literal["full", "compact"] = "full"
    reasoning_effort: Literal["low", "medium", "high"] | None = None  # a reasoning model's effort, as LiteLLM maps it
    cache: bool = True  # Anthropic prompt-cache breakpoints (Claude, also on Bedrock and Vertex); false: none
    # What a small model needs from the harness (each can be switched off to measure it: `cli-agent eval --suite real`)
    read_before_edit: bool = True  # an edit of a file not read in the conversation is refused with its region
    loose_edits: bool = True  # edit_file matches ignoring trailing whitespace, indentation and line endings
    syntax_check: bool = True  # a change that would leave a .py file unparseable is refused before approval
    task_files: bool = True  # the files a task names are shown with it
    repo_map: bool = True  # where the task's words are defined (functions, classes, line numbers) is shown with it
    context_window: int | None = rule(None, ge=1)
    tool_result_max_chars: int = rule(20000, ge=1)
    max_retries: int = rule(4, ge=0)
    retry_base_delay: float = rule(1.0, ge=0)
    locks: list[str] = field(default_factory=list)
    commands: Literal["auto", "ask"] = "auto"  # "ask": ask before each command runs, not only for its changes
    test_command: str | None = None  # how to run the tests (else detected: pytest, npm test, cargo test, go test)
    verify: bool | Literal["required"] = True  # after a run's changes, the harness runs the tests in the command
    # sandbox (agent.judge); "required": a run whose changes have no proof ends with exit 9 (`--require-verified`)
    verify_rounds: int = rule(2, ge=0)  # failing tests go back to the model this many times before the run ends
    attempts: int = rule(1, ge=1, le=10)  # candidates judged by the tests: a change fails them, or never lands
    rewrite_first: bool = False  # with attempts > 1: a whole-definition rewrite is the first candidate, the loop second
    command_timeout: float = rule(120.0, gt=0)  # a command's timeout when the call names none
    command_timeout_max: float = rule(600.0, gt=0)  # the most a call may ask for
    local: LocalSettings = field(default_factory=LocalSettings)
    mcp_servers: dict[str, McpServer] = rule(factory=dict, before=check_names)  # config files only
    config_files: tuple[str, ...] = ()  # the files read: set by the loader, not a key
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    web: WebSettings = field(default_factory=WebSettings)
    hooks: list[Hook] = field(default_factory=list)  # [[hooks]]: config files only; they add up (user config first)
    agents: dict[str, AgentType] = field(default_factory=dict)  # [agents.NAME]: the task tool's agent types
    permissions: list[PermissionRule] = field(default_factory=list)  # [[permissions]]: config files only; they add up


# a setting per key
TABLES: dict[str, type] = {"local": LocalSettings, "sandbox": SandboxSettings, "web": WebSettings}
# taken whole, from config files only: no flag, no env variable, not in KEYS
_WHOLE = ("mcp_servers", "config_files", "hooks", "agents", "permissions")
KEYS: tuple[str, ...] = (*(k for k in field_names(Settings) if k not in TABLES and k not in _WHOLE),
                         *(f"{t}.{k}" for t, model in TABLES.items() for k in field_names(model)))
USER_ONLY_TABLES = ("sandbox", "web")  # tables only the user config file may set


def env_var(key: str) -> str:
    return "CLI_AGENT_" + key.replace(".", "_").upper()


def flag_name(key: str) -> str:
    return "--" + key.replace(".", "-").replace("_", "-")


def mask_secret(secret: str) -> str:
    return f"{secret[:3]}…{secret[-4:]}" if len(secret) >= 16 else "(set)"


def owner(key: str) -> tuple[type, str]:
    """The class that declares the key's field (Settings, or a table's), and the field's name."""
    table, _, name = key.rpartition(".")
    return TABLES[table] if table else Settings, name


def key_type(key: str) -> Any:
    return field_type(*owner(key))


def value_of(settings: Settings, key: str) -> Any:
    table, _, name = key.rpartition(".")
    return getattr(getattr(settings, table) if table else settings, name)


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """`{"local.model": x}` as `{"local": {"model": x}}`."""
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        table, _, name = key.rpartition(".")
        (nested.setdefault(table, {}) if table else nested)[name] = value
    return nested
