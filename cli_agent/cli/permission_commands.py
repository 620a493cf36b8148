"""`cli-agent permissions` (every [[permissions]] rule with its file and line) and `cli-agent permissions check TOOL
JSON_ARGS` (which rule decides that call, and why). The wording is config's (`render_rules`, `explain_call`).

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

import json
from typing import Annotated

import typer

from cli_agent.cli.flags import AsJson, ConfigFile, Workspace, load
from cli_agent.config import explain_call, render_rules, subject_for
from cli_agent.contracts import UsageError, escape_for_terminal, flags_given, json_for_output

permissions_app = typer.Typer(help="The [[permissions]] rules: list them (with their file and line), or check "
                                   "which one decides a call.", invoke_without_command=True)


@permissions_app.callback()
def permissions_root(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None,
                     as_json: AsJson = False) -> int:
    """List every rule, with its file and line, in the order they are checked (deny, then ask, then allow)."""
    if ctx.invoked_subcommand is not None:
        root = ctx.find_root().obj  # `permissions -C DIR check ...`: the group's flags hold for its command
        root.flags = dict(root.flags or {}) | flags_given(workspace=workspace, config=config)
        return 0
    loaded = load(ctx, workspace=workspace, config=config, announce=False)
    rules = loaded.settings.permissions
    if as_json:
        typer.echo(json_for_output({"rules": [{"decision": r.decision, "rule": r.label, "origin": r.origin,
                                               "file": r.file, "reason": r.reason} for r in rules],
                                    "notes": list(loaded.notes)}, indent=2))
    else:
        typer.echo(escape_for_terminal(render_rules(rules, loaded.notes)))
    return 0


@permissions_app.command("check")
def permissions_check(ctx: typer.Context,
                      tool: Annotated[str, typer.Argument(help="The tool's name (run_command, edit_file, "
                                                                "web_fetch, SERVER__tool, ...).")],
                      arguments: Annotated[str, typer.Argument(help='The call\'s arguments as a JSON object: '
                                                                    '\'{"command": "git push"}\'.')] = "{}",
                      as_json: AsJson = False) -> int:
    """Which rule decides a call of TOOL with JSON_ARGS, and why (nothing runs)."""
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise UsageError(f"JSON_ARGS is not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(parsed, dict):
        raise UsageError("JSON_ARGS must be a JSON object, such as '{\"command\": \"git push\"}'")
    loaded = load(ctx, announce=False)
    decision, why = explain_call(loaded.settings.permissions, subject_for(tool, parsed))
    if as_json:
        typer.echo(json_for_output({"tool": tool, "decision": decision, "why": why}, indent=2))
    else:
        typer.echo(escape_for_terminal(why))
    return 0
