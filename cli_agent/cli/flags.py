"""The Typer app's shared options and what its commands share: each option is also a config key and a
`CLI_AGENT_<NAME>` variable; `load` gives the settings from the root's flags overridden by a command's own.

No `from __future__ import annotations`, as in every module of the Typer app: Typer reads every command's
annotations at each start, and real objects spare it evaluating ~100 strings (10 ms, a fortieth of a one-shot run).
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from cli_agent.session import load_for, provider_factory

Model = Annotated[str | None, typer.Option("--model", "-m", help="A LiteLLM model string (e.g. openai/gpt-4o-mini), "
                                                                "local for the bundled offline model, or "
                                                                "scripted:FILE.json for the scripted provider.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", help="API key (else the provider's usual env var).")]
Workspace = Annotated[str | None, typer.Option("--workspace", "-C", help="The folder the agent works on.")]
Yes = Annotated[bool | None, typer.Option("--yes", "-y", help="Approve every change (protected and locked paths "
                                                               "stay refused).")]
Protocol = Annotated[str | None, typer.Option("--protocol", help="auto | native | json")]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", help="Most model requests in one run (default 20).")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds one run may take (default 300).")]
Output = Annotated[str | None, typer.Option("--output", "-o", help="text | json | stream-json")]
TracePath = Annotated[str | None, typer.Option("--trace", help="Write the trace here (default: user state dir).")]
NoTools = Annotated[bool | None, typer.Option("--no-tools", help="Plain chat: no tools, no enhanced prompt.")]
ConfigFile = Annotated[Path | None, typer.Option("--config", help="A config file layered over project and user.")]
Attempts = Annotated[int | None, typer.Option("--attempts", help="Candidates judged by the tests when a change "
                                                                "still fails them or never lands (default 1).")]
RequireVerified = Annotated[bool | None, typer.Option("--require-verified", help="End a run whose changes no test "
                                                                                "proved with exit 9 (verify = "
                                                                                "\"required\").")]
Trust = Annotated[bool | None, typer.Option("--trust", help="Trust this folder's project config for this run "
                                                             "(also CLI_AGENT_TRUST=1); see cli-agent trust.")]
AsJson = Annotated[bool, typer.Option("--json", help="As JSON.")]


def load(ctx: typer.Context, *, announce: bool = True, **sub_flags: Any) -> Any:
    return load_for(ctx.find_root().obj, announce=announce, **sub_flags)


def root_flag(ctx: typer.Context, name: str) -> Any:
    """A flag given to the root (`cli-agent -o json replay ...`), None when it was not."""
    return (ctx.find_root().obj.flags or {}).get(name)


def trust_flag(ctx: typer.Context) -> bool | None:
    """True when --trust was given; None: as the environment and the trust store say."""
    return True if root_flag(ctx, "trust") else None


def factory(ctx: typer.Context) -> Any:
    return provider_factory(ctx.find_root().obj)
