"""What the model is told: the system prompt and the native tool schemas (`builder`, `compact`, `context`), the
prompt plan of a session's runs (`plan`: the wire protocol, each request's `Plan`), and what it sees with a task
before its first step (`brief`: the task's files (`task_files`) and the repository map (`repo_map`)); the
project's test command (`project_tests`).

May import: tools and everything below it.
"""

from cli_agent.prompt.brief import *
from cli_agent.prompt.plan import *
from cli_agent.prompt.project_tests import *
from cli_agent.prompt.repo_map import *
from cli_agent.prompt.task_files import *

__all__ = [
    "Outline", "Place", "Plan", "Planner", "briefer", "detect_test_command", "is_test_path", "named_files",
    "planned_protocol", "shown", "task_brief",
]
