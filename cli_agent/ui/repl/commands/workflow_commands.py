"""Workflows in the REPL: `/NAME ARGS` for every workflow, `/help NAME`, and `/workflows` with the REPL's names.

Each workflow loaded when the REPL starts becomes a command: `/explain src/app.py`, `/refactor src/a.py "make it
fast"`, `/explain path=src/app.py question="how are retries done"`. The arguments split like a shell, positional in
declared order or `key=value` (`workflow_run.parse_arguments`); tab offers parameter names and choices. A required
parameter still missing is asked for, one question each, with its help text, its type checked and its choices
completed; Ctrl-C (or Ctrl-D) at a question cancels with nothing run. The steps then run like a turn: the REPL's
renderer, approval and Ctrl-C.

Names: a workflow is `/NAME`, and `/wf:NAME` too. When NAME is already a command (a built-in such as `/clear`, or
`/undo`, `/resume`: this module registers last), the command keeps it and the workflow is only `/wf:NAME`; the REPL
says so once it has started (before the first answer), and `/workflows` says it again.

Skills (`SKILL.md` folders) are `/NAME REQUEST` too, registered after the workflows: a workflow or a command of the
same name keeps it, with a note. A skill's command runs one turn: its instructions, then the request.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command
from cli_agent.ui.view import hanging

if TYPE_CHECKING:
    from cli_agent.instructions import Skill, Skills
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry, Handler
    from cli_agent.workflows import Catalog, Param, Workflow

PREFIX = "wf:"  # `/wf:NAME` always reaches the workflow NAME


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> list[str]:
    from cli_agent.workflows import load_workflows  # deferred: workflows, only for a `/NAME` task

    catalog = load_workflows(ctx.settings.workspace)
    renamed: list[str] = []  # filled in below; the listing shows it
    registry.register(Command("workflows", "the workflows, by category", _listing(catalog, renamed)))
    for workflow in catalog.workflows.values():
        free = registry.get(workflow.name) is None
        name = workflow.name if free else PREFIX + workflow.name
        registry.register(_command(workflow, name, aliases=(PREFIX + workflow.name,) if free else ()))
        if not free:
            renamed.append(f"the {workflow.source} workflow {workflow.name} is /{name} here: /{workflow.name} is a "
                           "command of cli-agent")
    return [*(f"skipped a broken workflow file: {e}" for e in catalog.errors), *renamed, *catalog.notes,
            *register_skills(registry, ctx)]


def register_skills(registry: CommandRegistry, ctx: CommandContext) -> list[str]:
    """Each skill (`SKILL.md` folders, `cli_agent.instructions`) as `/NAME REQUEST`, after the workflows: a name
    taken by a workflow or a command stays theirs, with a note; `/skills` lists them."""
    from cli_agent.instructions import load_skills  # deferred: the skills load behind the REPL's first prompt (Startup)

    found = load_skills(Path(ctx.settings.workspace))
    notes = list(found.notes)
    for skill in found.skills.values():
        taken = registry.get(skill.name)
        if taken is not None:
            notes.append(f"/{skill.name} runs the {'workflow' if taken.category.startswith('workflow') else 'command'}"
                         f" {skill.name}; the skill of the same name is left out (the model can still load it)")
            continue
        registry.register(Command(skill.name, skill.description, _skill_runner(skill), "[REQUEST]",
                                  help=f"{skill.description}\n\nfrom {skill.origin}: {skill.folder}",
                                  category="skill"))
    registry.register(Command("skills", "the skills (SKILL.md folders) and where each comes from",
                              _skill_listing(found, notes)))
    return notes


def _skill_runner(skill: Skill) -> Handler:
    def run(ctx: CommandContext, args: str) -> None:
        _say(ctx, f"skill {skill.name} ({skill.origin})", "dim")
        task = skill.prompt(ctx.session.workspace.root, args)
        ctx.drive(ctx.session.run(task, ctx.approver, command=" ".join(f"/{skill.name} {args}".split())))

    return run


def _skill_listing(found: Skills, notes: list[str]) -> Handler:
    def show(ctx: CommandContext, args: str) -> None:
        lines = [f"/{s.name}  {s.description}\n    from {s.origin}: {s.folder}" for s in found.skills.values()]
        _say(ctx, "\n".join([*(lines or ["no skills"]), *notes]))

    return show


def _command(workflow: Workflow, name: str, aliases: tuple[str, ...]) -> Command:
    from cli_agent.workflows import complete_arguments  # deferred: workflows, only for a `/NAME` task

    params = [f"  {p.describe()}" for p in workflow.params] or ["  (none)"]
    help_text = "\n".join([workflow.description, "", "parameters (positional in this order, or name=value):",
                           *params, "", f"from {workflow.source}: {workflow.path}",
                           *(f"shadows {path}" for path in workflow.shadows)])
    return Command(name, workflow.title, _runner(workflow, name), " ".join(p.usage for p in workflow.params),
                   help=help_text, category=f"workflow: {workflow.category}", aliases=aliases,
                   complete=lambda ctx, args: complete_arguments(workflow, args, getattr(ctx, "workspace_paths", None)))


def _runner(workflow: Workflow, name: str) -> Handler:
    def run(ctx: CommandContext, args: str) -> None:
        # deferred: workflows, only for a `/NAME` task
        from cli_agent.workflows import ask_missing, parse_arguments, run_workflow

        workspace = ctx.session.workspace
        values, missing = parse_arguments(workflow, args, workspace)  # a bad value: WorkflowError, one line
        if missing:
            _say(ctx, f"{workflow.name} needs {len(missing)} more parameter(s) (Ctrl-C cancels):", "dim")
            try:
                values |= ask_missing(workflow, missing, _asker(ctx), workspace)
            except (KeyboardInterrupt, EOFError):
                _say(ctx, f"cancelled: {workflow.name} did not run", "yellow")
                return
        given = "  ".join(f"{k}={v!r}" for k, v in values.items() if v is not None)
        _say(ctx, f"workflow {workflow.name}" + (f": {given}" if given else ""), "dim")
        typed = " ".join(f"/{name} {args}".split())  # what the user asked: a resumed session shows it, not the prompt
        ctx.drive(run_workflow(ctx.session, workflow, values, ctx.approver, command=typed))

    return run


def _asker(ctx: CommandContext) -> Callable[[Param, str | None], str]:
    def ask(param: Param, problem: str | None) -> str:
        said = Text(esc(problem or param.describe()), style="yellow" if problem else "dim")
        ctx.console.print(hanging(Text("  "), said))  # wrapped under itself, not at column 0
        choices = param.choices if param.type == "choice" else ("yes", "no") if param.type == "bool" else ()
        if param.type == "path":  # Tab completes the workspace's paths, as on the command line
            return ctx.ask(f"{param.name}: ", paths=True)
        return ctx.ask(f"{param.name}: ", choices=choices)

    return ask


def _listing(catalog: Catalog, renamed: list[str]) -> Handler:
    """`/workflows`: the workflows as loaded when the REPL started (those it can run)."""

    def show(ctx: CommandContext, args: str) -> None:
        from cli_agent.workflows import render_catalog  # deferred: workflows, only for a `/NAME` task

        lines = [render_catalog(catalog, ctx.console.width) if catalog.workflows else "no workflows",
                 *(f"broken workflow file: {e}" for e in catalog.errors), "",
                 f"run one with /NAME ARGS (or /{PREFIX}NAME ARGS); /help NAME shows its parameters", *renamed]
        _say(ctx, "\n".join(lines))

    return show


def _say(ctx: CommandContext, text: str, style: str = "") -> None:
    ctx.console.print(Text(esc(text), style=style))
