"""The REPL's built-in slash commands: /help, /exit, /model, /approval, /plan, /permissions, /tools, /prompt, /trace,
/cost, and the
context commands (/clear, /compact, /expand, /diff). The other command modules register theirs through
`command_set`."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command, CommandContext, CommandRegistry, Outcome
from cli_agent.ui.repl.commands.context_commands import context_commands
from cli_agent.ui.repl.commands.model_commands import model_command
from cli_agent.ui.view import hanging

KEYS_HELP = ("Enter sends · Meta+Enter or Ctrl-J: new line · Ctrl-R: search history · Tab: complete · "
             "@path attaches a file · //text sends /text · Ctrl-O: a folded paste in full · Esc or Ctrl-C "
             "interrupts the turn (what you type meanwhile is sent next) · Ctrl-D, or Ctrl-C twice at an empty "
             "prompt, quits")
_USAGE_ROOM = 25  # the summaries' column; a longer usage pushes its own summary on


# -- the built-ins ---------------------------------------------------------------------------------------------

def _say(ctx: CommandContext, text: str, style: str = "") -> None:
    ctx.console.print(Text(esc(text), style=style))


def _help(ctx: CommandContext, args: str) -> None:
    if args:
        command = ctx.commands.get(args.split()[0])
        if command is None:
            ctx.commands.dispatch(ctx, "/" + args.split()[0].lstrip("/"))
            return
        out = Text(f"/{esc(command.name)} {esc(command.usage)}".rstrip(), style="bold")
        out.append("\n  " + esc(command.summary))
        if command.help:
            out.append("\n\n" + esc(command.help))
        if command.aliases:
            out.append("\n  also: " + ", ".join("/" + esc(a) for a in command.aliases), style="dim")
        ctx.console.print(out)
        return

    keys = Text(KEYS_HELP, style="dim")  # what a newcomer needs first
    keys.append("\nApproval answers: y yes · n no, stop the turn · f no, and say what to do instead · a yes to all, "
                "this session · t yes to this tool, this session · w always (write a rule) · v the whole change. "
                "Shift+Tab cycles the mode (default, plan, edits, all), also while the model works.\n", style="dim")
    ctx.console.print(keys)
    workflows: dict[str, list[str]] = {}
    lines: list[Text] = []
    commands = [c for c in ctx.commands.commands() if c.category == "commands"]
    room = min(max((len(f"/{c.name} {c.usage}".rstrip()) for c in commands), default=0), _USAGE_ROOM)
    for command in ctx.commands.commands():
        if command.category != "commands":  # a workflow: its name, in a line of its category
            workflows.setdefault(command.category, []).append("/" + command.name)
            continue
        # one line a command at any width, its summary cut with … (/help NAME says it whole)
        usage = f"/{command.name} {command.usage}".rstrip()
        line = Text.assemble(("  " + esc(usage).ljust(room) + " ", "cyan"), esc(command.summary))
        line.truncate(ctx.console.width - 1, overflow="ellipsis")
        lines.append(line)
    ctx.console.print(Text("commands:", style="bold"))
    ctx.console.print(Text("\n").join(lines))
    for category, names in workflows.items():
        line = Text.assemble((esc(category) + ": ", "bold"), (esc(" ".join(names)), "cyan"))
        ctx.console.print(hanging(Text("  "), line))
    if workflows:
        ctx.console.print(hanging(Text("  "), Text("/help NAME shows one in full; /workflows: all workflows",
                                                    style="dim")))


def _complete_commands(ctx: CommandContext, args: str) -> Iterable[str]:
    return ctx.commands.names()


def _exit(ctx: CommandContext, args: str) -> Outcome:
    return Outcome.EXIT


def _model(ctx: CommandContext, args: str) -> None:
    model_command(ctx, args)


_MODES = {"ask": "every change is asked for (the default mode)",
          "plan": "read only: the model reads and plans, nothing changes until you approve the plan",
          "edits": "creating and editing files is approved; deleting is asked for",
          "all": "every change is approved without asking"}
_ALIASES = {"default": "ask"}  # --mode's names


def _approval(ctx: CommandContext, args: str) -> None:
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.agent import ApprovalMode

    agent = ctx.session.agent
    args = _ALIASES.get(args.strip(), args.strip())
    if args:
        if args not in _MODES:
            _say(ctx, f"unknown approval mode {args!r}: use default (ask), plan, edits or all", "yellow")
            return
        ctx.session.set_mode(ApprovalMode(args), keep_grants=False)
    policy = agent.policy
    _say(ctx, f"approval: {policy.mode.value}: {_MODES[policy.mode.value]}" + ("  (--yes: everything is approved)"
                                                                               if policy.yes else ""))
    if policy.granted_tools:
        _say(ctx, "approved for this session: " + ", ".join(sorted(policy.granted_tools)), "dim")


def _plan(ctx: CommandContext, args: str) -> None:
    """Plan mode; with words, they go to the model as the turn to plan."""
    _approval(ctx, "plan")
    if args.strip():
        ctx.run_turn(args.strip())


def _permissions(ctx: CommandContext, args: str) -> None:
    """The [[permissions]] rules in force (as `cli-agent permissions` lists them, with the rules "always" wrote
    in this session)."""
    from cli_agent.config import render_rules  # deferred: the settings load behind the REPL's first prompt (Startup)

    ctx.console.print(Text(esc(render_rules(ctx.session.agent.policy.rules))))


def _tools(ctx: CommandContext, args: str) -> None:
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for column in ("tool", "category", "asks", "description"):
        table.add_column(column, overflow="fold")
    registry = ctx.session.registry
    for category in registry.categories():
        for spec in registry.by_category(category):
            table.add_row(Text(esc(spec.name), style="cyan"), Text(esc(category)),
                          Text("yes" if spec.requires_approval else "-"), Text(esc(spec.description.split(". ")[0])))
    ctx.console.print(table)


def _prompt(ctx: CommandContext, args: str) -> None:
    plan = ctx.session.agent.plan(args)
    _say(ctx, plan.system or "(no system prompt: plain chat)")
    _say(ctx, f"fingerprint {plan.fingerprint}", "dim")


def _trace(ctx: CommandContext, args: str) -> None:
    _say(ctx, str(ctx.session.trace_path))


def _cost(ctx: CommandContext, args: str) -> None:
    usage = ctx.session.agent.usage
    cached = f" ({usage.cached_tokens:,} of the prompt's from the cache)" if usage.cached_tokens else ""
    if usage.cache_write_tokens:
        cached = (f" ({usage.cached_tokens:,} of the prompt's read from the cache, {usage.cache_write_tokens:,} "
                  "written to it)")
    _say(ctx, f"this session: {usage.prompt_tokens:,} prompt{cached} + {usage.completion_tokens:,} completion "
              f"tokens = {usage.total_tokens:,}; cost ${usage.cost_usd:.4f}" + ("" if usage.cost_usd else
                                                                               " (unknown or free for this model)"))


def builtin_commands() -> CommandRegistry:
    registry = CommandRegistry()
    for command in (
        Command("help", "list the commands, or show one", _help, "[command|workflow]", complete=_complete_commands),
        Command("exit", "leave the REPL (Ctrl-D too)", _exit, aliases=("quit",)),
        Command("model", "show the model and pick another, or switch to NAME", _model, "[NAME]",
                help="/model lists the models to pick from (this one, those used here before, one for each "
                     "provider whose API key is set, the local model); /model NAME switches to it once it is "
                     "checked (a bad name is refused and the model stays). The conversation carries over when the "
                     "new model speaks the same protocol or the conversation has no tool calls; otherwise you are "
                     "asked before a new one starts."),
        Command("approval", "show or set what is approved without asking", _approval, "[default|plan|edits|all]",
                help="\n".join(f"{k}: {v}" for k, v in _MODES.items()) + "\ndefault: the same as ask",
                complete=lambda ctx, args: [*_MODES, *_ALIASES]),
        Command("plan", "plan mode: read and plan, change nothing until you approve the plan", _plan, "[TASK]",
                help="The model gets only the read-only tools and ends with a plan; you approve it and pick the "
                     "mode to carry it out in (or keep planning). Shift+Tab or /approval leaves plan mode."),
        Command("permissions", "the [[permissions]] rules, with their files and lines", _permissions,
                help="The rules in the order they are checked (deny, then ask, then allow). `cli-agent permissions "
                     "check TOOL JSON_ARGS` says which rule decides a call."),
        Command("tools", "the tools the model can use", _tools),
        Command("prompt", "the system prompt the model gets", _prompt, "[TASK]",
                help="A task text shows which optional tools it would bring in."),
        Command("trace", "where this session's trace is written", _trace),
        Command("cost", "tokens and cost of this session", _cost),
    ):
        registry.register(command)
    for command in context_commands():
        registry.register(command)
    return registry
