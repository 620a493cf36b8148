"""A redirect from a public address to a private one is refused, as the first URL would be. The public server
needs a public address: the test runs in a network namespace of its own (`unshare -n`, as root) where the loopback
device also holds 93.184.216.34, so nothing leaves the machine. A server on 127.0.0.1 in the same namespace counts
what reaches it: nothing may."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from places import REPO

SCRIPT = r"""
import json, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
subprocess.run(["ip", "addr", "add", "93.184.216.34/32", "dev", "lo"], check=True)
sys.path.insert(0, sys.argv[1])
from webkit import web_server
from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools.context import ToolContext
from cli_agent.tools.web.page import web_fetch

ctx = ToolContext(Workspace(sys.argv[2]))
out = {}
with web_server("93.184.216.34", 8080) as (public, _), web_server("127.0.0.1", 8081) as (local, local_hits):
    out["public"] = web_fetch(ctx, public + "/page")["title"]
    for target in ["http://127.0.0.1:8081/page", "http://10.0.0.1/", "http://169.254.169.254/latest/",
                   "http://localhost:8081/page", "http://[::1]:8081/page", "http://2130706433:8081/page"]:
        try:
            web_fetch(ctx, public + "/to?u=" + target)
            out[target] = "fetched"
        except ToolError as exc:
            out[target] = exc.message
    out["local_hits"] = list(local_hits)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_redirect_to_a_private_address_is_refused(tmp_path):
    if shutil.which("unshare") is None or shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("needs unshare, ip and root for a network namespace")
    env = os.environ | {"PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", SCRIPT, str(REPO / "tests"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out.pop("public") == "Release notes & more"  # the public server is reachable
    assert out.pop("local_hits") == []
    assert set(out) == {"http://127.0.0.1:8081/page", "http://10.0.0.1/", "http://169.254.169.254/latest/",
                        "http://localhost:8081/page", "http://[::1]:8081/page", "http://2130706433:8081/page"}
    for target, outcome in out.items():
        assert outcome.startswith("refused: "), (target, outcome)
