"""What the model is told: the system prompt and the native tool schemas (`builder`, `compact`, `context`), the
prompt plan of a session's runs (`plan`: the wire protocol, each request's `Plan`), and what it sees with a task
before its first step (`brief`: the task's files (`task_files`) and the repository map (`repo_map`)); the
project's test command (`project_tests`).

May import: tools and everything below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.prompt.brief import briefer
    from cli_agent.prompt.plan import Plan, Planner, planned_protocol
    from cli_agent.prompt.project_tests import detect_test_command, is_test_path, shown
    from cli_agent.prompt.repo_map import Outline
    from cli_agent.prompt.task_files import Place, named_files, task_brief

__all__ = [
    "Outline",
    "Place",
    "Plan",
    "Planner",
    "briefer",
    "detect_test_command",
    "is_test_path",
    "named_files",
    "planned_protocol",
    "shown",
    "task_brief",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("briefer",):
        from cli_agent.prompt import brief

        return getattr(brief, name)
    if name in ("Plan", "Planner", "planned_protocol"):
        from cli_agent.prompt import plan

        return getattr(plan, name)
    if name in ("detect_test_command", "is_test_path", "shown"):
        from cli_agent.prompt import project_tests

        return getattr(project_tests, name)
    if name in ("Outline",):
        from cli_agent.prompt import repo_map

        return getattr(repo_map, name)
    if name in ("Place", "named_files", "task_brief"):
        from cli_agent.prompt import task_files

        return getattr(task_files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
