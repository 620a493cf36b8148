"""[[permissions]] rules from the command line, with the scripted model and no --yes: a denied `git push` (plain,
compound, wrapped), an edit under src/ allowed next to one elsewhere refused, a deny that beats an allow, an
untrusted project's allow ignored and its deny kept, a rule whose own example fails at load, `permissions` and
`permissions check`."""

from __future__ import annotations

import json

import pytest
from clikit import cli, user_config

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

RULES = '''
[[permissions]]
name = "src-edits"
decision = "allow"
tool = "*_file"
paths = ["src/**"]
match = ["src/app.py"]
not_match = ["lib/app.py"]

[[permissions]]
name = "no-push"
decision = "deny"
tool = "run_command"
prefix = ["git", "push"]
reason = "pushing is for people"

[[permissions]]
name = "no-secrets"
decision = "deny"
paths = ["src/secrets/"]
'''


def _script(path, *replies):
    path.write_text(json.dumps(list(replies)))
    return f"scripted:{path}"


def _call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _project(tmp_path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "src" / "secrets").mkdir(parents=True)
    (ws / "lib").mkdir()
    for name in ("src/app.py", "lib/app.py", "src/secrets/key.txt"):
        (ws / name).write_text("old\n")
    return ws, home


def _run(tmp_path, ws, home, *replies, extra=()):
    done = cli(["-C", str(ws), "-p", "go", "--model", _script(tmp_path / "s.json", *replies, {"text": "done"}),
                "--output", "json", *extra], home=home)
    return done, json.loads(done.stdout) if done.stdout.strip() else None


def test_an_edit_under_src_is_allowed_without_yes_and_one_elsewhere_is_refused(tmp_path):
    ws, home = _project(tmp_path)
    user_config(home, RULES)
    done, report = _run(tmp_path, ws, home, _call("write_file", path="src/app.py", content="new\n"))
    assert done.returncode == 0, done.stderr
    assert (ws / "src/app.py").read_text() == "new\n"
    [entry] = report["tool_calls"]
    assert entry["approved"] is True and entry["rule"] == "allowed by rule src-edits (user config:2)"
    done, report = _run(tmp_path, ws, home, _call("write_file", path="lib/app.py", content="new\n"))
    assert done.returncode == 3 and (ws / "lib/app.py").read_text() == "old\n"


def test_a_deny_beats_an_allow(tmp_path):
    ws, home = _project(tmp_path)
    user_config(home, RULES)
    _, report = _run(tmp_path, ws, home, _call("write_file", path="src/secrets/key.txt", content="new\n"),
                     extra=("--yes",))
    assert (ws / "src/secrets/key.txt").read_text() == "old\n"
    [entry] = report["tool_calls"]
    assert entry["approved"] is False and entry["rule"].startswith("denied by rule no-secrets (user config:")


@pytest.mark.parametrize("line", ["git push origin main", "git status && git push",
                                  "env GIT_TRACE=1 timeout 5 git push", "nice -n 5 git push --force"])
def test_git_push_is_denied_plain_compound_and_wrapped(tmp_path, line):
    ws, home = _project(tmp_path)
    user_config(home, RULES)
    done, report = _run(tmp_path, ws, home, _call("run_command", command=line), extra=("--yes",))
    [entry] = report["tool_calls"]
    assert entry["approved"] is False, done.stderr
    assert entry["rule"] == "denied by rule no-push (user config:10) (pushing is for people)"
    assert entry["ok"] is False and done.returncode == 0  # the model is told, and goes on


def test_an_untrusted_projects_allow_is_ignored_and_its_deny_kept(tmp_path):
    ws, home = _project(tmp_path)
    user_config(home, "")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text(RULES)
    done, report = _run(tmp_path, ws, home, _call("write_file", path="src/app.py", content="new\n"))
    assert done.returncode == 3 and (ws / "src/app.py").read_text() == "old\n"  # its allow: ignored
    assert sum("src-edits (project config:2)" in note for note in report["notes"]) == 1
    done, report = _run(tmp_path, ws, home, _call("write_file", path="src/secrets/key.txt", content="new\n"),
                        extra=("--yes",))
    assert report["tool_calls"][0]["rule"].startswith("denied by rule no-secrets (project config:")  # its deny: kept
    done, report = _run(tmp_path, ws, home, _call("write_file", path="src/app.py", content="new\n"),
                        extra=("--trust",))
    assert done.returncode == 0 and (ws / "src/app.py").read_text() == "new\n"  # trusted: the allow counts


def test_a_rule_whose_match_example_fails_is_a_config_error(tmp_path):
    ws, home = _project(tmp_path)
    user_config(home, RULES.replace('match = ["src/app.py"]', 'match = ["lib/app.py"]'))
    done = cli(["-C", str(ws), "-p", "go", "--model", "scripted:/nonexistent"], home=home)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "config.toml:2: permissions[0]: rule 'src-edits': its match example 'lib/app.py' does not match" \
        in done.stderr


def test_permissions_lists_the_rules_and_check_says_which_decides(tmp_path):
    ws, home = _project(tmp_path)
    user_config(home, RULES)
    listed = cli(["permissions", "-C", str(ws)], home=home)
    assert listed.returncode == 0
    config = home / "config" / "config.toml"
    assert f"no-push  (user config, {config}:10)" in listed.stdout
    assert listed.stdout.index("no-push") < listed.stdout.index("src-edits")  # deny first
    check = cli(["permissions", "-C", str(ws), "check", "run_command", '{"command": "timeout 9 git push"}'],
                home=home)
    assert check.returncode == 0 and check.stdout.startswith("deny: rule no-push (user config:10) decides it")
    assert "reason: pushing is for people" in check.stdout
    none = cli(["permissions", "check", "web_fetch", '{"url": "https://example.org/"}', "--json"], home=home)
    assert json.loads(none.stdout)["decision"] == "none"
    bad = cli(["permissions", "check", "run_command", "{nope"], home=home)
    assert bad.returncode == 2 and "JSON_ARGS is not JSON" in bad.stderr
