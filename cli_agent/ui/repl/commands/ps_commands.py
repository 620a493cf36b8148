"""The REPL's `/ps`: the session's background processes (`run_command` with `background`), each with its command,
age and last line of output, and the change set of one that has ended, waiting to be approved; `/ps stop N` ends
one and everything it started. What a stopped process changed is not applied here: the model's next
`process_output` or `stop_process` of it hands the change set over, and it is asked for like a command's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cli_agent.contracts import ToolError
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command

if TYPE_CHECKING:
    from cli_agent.sandbox import Process, Processes
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry


_HELP = ("/ps lists the processes started in the background (run_command with background = true): number, state, "
         "age, command and last line of output, and the file changes of one that has ended, waiting to be approved. "
         "/ps stop N ends process N and everything it started; its changes are asked for when the model next reads "
         "it. All of them stop when the session ends (/clear, exit, Ctrl-C twice).")


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("ps", "the background processes: list them, or stop one", _ps, "[stop N]", help=_HELP,
                              complete=lambda c, args: ["stop"]))


def table_of(ctx: CommandContext) -> Processes | None:
    commands = getattr(ctx.session, "commands", None)
    return None if commands is None else commands.processes


def _ps(ctx: CommandContext, args: str) -> None:
    processes = table_of(ctx)
    words = args.split()
    if processes is None:
        ctx.console.print(Text("no background processes: commands have no sandbox in this session "
                               "(`cli-agent sandbox` says why)", style="yellow"))
        return
    if not words:
        _list(ctx, processes)
        return
    if len(words) != 2 or words[0] != "stop" or not words[1].isdigit():
        ctx.console.print(Text(f"usage: /ps [stop N], not {esc(args.strip())!r}", style="yellow"))
        return
    try:
        process = processes.stop(int(words[1]))
    except ToolError as exc:
        ctx.console.print(Text(esc(exc.message), style="yellow"))
        return
    ctx.console.print(Text(f"stopped process {process.number} (exit code {process.exit_code}): "
                           f"{esc(process.command)}", style="green"))
    waiting = process.changes is not None and bool(process.changes)
    note = f"; its file changes ({process.changes.summary()}) wait for your approval" if waiting and \
        process.changes is not None else ""
    if note:
        ctx.console.print(Text("  " + note.lstrip("; "), style="dim"))
    ctx.session.add_note(f"(The user stopped background process {process.number}, `{process.command}`{note}: "
                         f"process_output {process.number} hands its last output and change set over.)")


def _list(ctx: CommandContext, processes: Processes) -> None:
    listed = processes.listing()
    if not listed:
        ctx.console.print(Text("no background processes (run_command with background = true starts one)",
                               style="dim"))
        return
    for process in listed:
        ctx.console.print(_row(process))


def _row(process: Process) -> Text:
    state = "running" if process.running else f"exited {process.exit_code}"
    row = Text(f"{process.number:>2}  ", style="bold")
    row.append(f"{state:<10} {_age(process.age_s()):>6}  ", style="green" if process.running else "dim")
    row.append(esc(process.command))
    last = process.ring.last_line()
    if last:
        row.append("\n      " + esc(last[:200]), style="dim")
    if not process.running and not process.changes_taken:
        changes = process.settle()
        if changes:
            row.append(f"\n      pending changes: {changes.summary()}", style="yellow")
    return row


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
