"""`cli-agent eval`: the offline scenario suite (scripted provider, the default) and live model comparisons.

    run_offline(only=None) -> [ScenarioResult]          # cli_agent.eval.runner, scenarios in offline.toml
    run_live(models, api_base=None) -> [ModelResult]     # cli_agent.eval.live, tasks in live.toml

The real-task suite (`real`, `real_run`, `real_report`, `real_sdist`): `cli-agent eval --suite real`.

A front end, beside ui/ and serve/: may import workflows, session and everything below them.
"""

from cli_agent.eval.command import *
from cli_agent.eval.real_report import *

__all__ = ["merge_command", "run_eval_command", "run_live", "run_offline", "run_real_command"]
