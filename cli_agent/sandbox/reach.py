"""What a sandboxed command can read, write and reach: one table, printed by `cli-agent sandbox` and kept in
docs/sandbox.md, each row with the test that holds it (tests/unit/sandbox/, tests/behaviour/test_run_command.py)."""

from __future__ import annotations

from cli_agent.contracts import dataclass

__all__ = ["text_table"]


@dataclass(frozen=True)
class Row:
    what: str
    can: str
    test: str


ROWS = (
    Row("the workspace", "read; write only to the staging layer, applied as an approved change set",
        "test_writes_outside_through_absolute_paths_dotdot_and_tmp_do_not_reach_the_host"),
    Row("`.git/`, `.cli-agent/`, locks naming a path inside the workspace", "read only",
        "test_git_hooks_and_the_project_folder_are_read_only"),
    Row("a lock naming `..`, a link, a socket or nothing", "never bound (a one-line note)",
        "test_repository_locks_never_bind_the_host_and_a_missing_one_breaks_nothing"),
    Row("`/tmp`", "a private 1 GiB tmpfs, gone after the command",
        "test_writes_outside_through_absolute_paths_dotdot_and_tmp_do_not_reach_the_host"),
    Row("system folders, interpreters, `PATH`", "read only",
        "test_secrets_in_home_and_the_user_config_are_unreachable"),
    Row("the environments `PATH`'s folders belong to, whole: a venv (and `VIRTUAL_ENV`) with the interpreter it was "
        "made from and its `.pth` folders, a conda env (and `CONDA_PREFIX`), pyenv, `node_modules/.bin`, nvm, cargo, "
        "rustup, Go; the links on the way", "read only, the same `sys.path` as in your shell",
        "test_a_venv_outside_the_workspace_is_shown_whole"),
    Row("HOME's tool folders, by name (pip, uv, poetry, pipenv, hatch, pre-commit, npm, yarn, pnpm, cargo's "
        "registry, Go's module cache, Maven, Gradle, ...) and `sandbox.read_paths`", "read only",
        "test_homes_tool_folders_are_shown_by_name_and_nothing_else"),
    Row("anything else under HOME (a token in `~/.cache/app/` at any depth, under any name, made at any time)",
        "absent", "test_homes_tool_folders_are_shown_by_name_and_nothing_else"),
    Row("a toolchain version file in the workspace's ancestors (`.python-version`, `.nvmrc`, `.node-version`, "
        "`.tool-versions`, `rust-toolchain`)", "read only; one that is a link only where it leads to what is shown "
        "anyway (a monorepo's `.python-version -> ~/.bashrc` shows nothing)",
        "test_a_version_file_linked_into_home_shows_nothing_of_home"),
    Row("a place of HOME's allowlist the user linked elsewhere (`~/.pyenv/version -> ~/.bashrc`)", "followed only "
        "to another allowlisted place of HOME, or out of HOME (a cache moved to another disk)",
        "test_an_allowlisted_place_linked_elsewhere_shows_only_what_is_allowed"),
    Row("what a repository's own environment links to (a `.venv` whose `bin/python3.x` leads to a Python-looking "
        "folder of HOME)", "only a Python outside HOME, in HOME's allowlist or among your own environments",
        "test_a_workspace_venv_whose_python_links_into_home_does_not_show_that_folder"),
    Row("credentials an environment keeps in itself (a venv's `pip.conf`, a Node prefix's `etc/npmrc`, a conda "
        "env's `.condarc`, ...), in `PATH`'s environments and those HOME's allowlisted places hold", "never",
        "test_the_credentials_a_toolchain_keeps_in_itself_are_masked"),
    Row("the rest of HOME (`~/.ssh`, `~/.aws`, `~/.config`, `~/.docker`, `~/.kube`, `~/.gnupg`, `~/.netrc`, ...)",
        "never", "test_secrets_in_home_and_the_user_config_are_unreachable"),
    Row("credential files (`~/.pgpass`, `~/.vault-token`, `~/.my.cnf`, shell histories, other agents' logins, "
        "...) wherever HOME is shown, and at the workspace's root; the file tools never return them anywhere",
        "never", "test_the_credential_files_of_home_are_masked_even_where_home_is_shown"),
    Row("cli-agent's own config, state and cache (also the default ones when `CLI_AGENT_HOME` moves them)",
        "never", "test_credential_files_in_homes_folders_and_cli_agents_own_are_unreachable"),
    Row("files under `/etc` others may not read (shadow, ssh, ssl/private, wireguard, letsencrypt, keytabs), "
        "and key files by name", "never", "test_private_files_under_etc_are_hidden_by_rule"),
    Row("`/proc/sys`, `/proc/sysrq-trigger` and the other kernel folders of `/proc`; `/sys`; `/dev`",
        "read only; `/sys` absent; `/dev` only null, zero, full, random, urandom, tty",
        "test_no_kernel_interface_is_writable"),
    Row("Unix sockets of the host (in caches, the venv, `.git/`)", "never connectable",
        "test_no_host_socket_is_connectable"),
    Row("the network", "none (the session's own loopback only) unless `sandbox.network = true`",
        "test_no_network_by_default_and_the_user_can_allow_it"),
    Row("the session's loopback (127.0.0.1)", "one network namespace for all the commands of a session: a later "
        "command reaches a server a background command started; another session's never",
        "test_a_command_reaches_a_background_server_of_its_session_and_not_of_another"),
    Row("the host's loopback (a server on your machine's 127.0.0.1)", "never, but through the proxy for a rule "
        "naming `localhost:PORT` or the address", "test_the_hosts_loopback_stays_out"),
    Row("the session's loopback from web_fetch (`[web] allow_private`, user config only)", "a loopback URL is "
        "fetched inside the session's network namespace first (a server a background command started), this "
        "machine's loopback only where nothing listens there; refused without `allow_private`",
        "test_web_fetch_reaches_a_background_server_of_the_session_before_the_hosts"),
    Row("network by rule (`[sandbox.network] allow`, `presets`, user config only)", "only through cli-agent's proxy, "
        "only the hosts a rule names; a name resolving to a loopback, private or link-local address (or an IPv6 form "
        "that carries one) refused unless a rule names the address; an unlisted host refused headless (the result "
        "names the setting), asked in the REPL",
        "test_pip_downloads_from_an_index_a_rule_allows_and_not_from_one_it_does_not"),
    Row("environment variables", "an allowlist plus `sandbox.env_allow`; the rest dropped",
        "test_commands_get_an_allowlisted_environment"),
    Row("processes", "all die with the command; at most 512 at once",
        "test_background_jobs_setsid_nohup_and_double_forks_die_with_the_command"),
    Row("background processes (`run_command` with `background`)", "at most 4 at once, each in a sandbox of its "
        "own until it ends, is stopped, or the session ends (also on SIGTERM, or cli-agent killed); its changes "
        "staged and asked for once it has ended",
        "test_no_process_outlives_cli_agent_terminated_or_killed"),
    Row("write paths (`sandbox.write_paths`, user config only)", "changed in place: not staged, not undoable; "
        "any other folder outside the workspace refused, the setting named",
        "test_pip_into_a_venv_not_listed_is_refused_naming_the_setting"),
    Row("time", "the call's `timeout_s`, at most `command_timeout_max` and never past the run's deadline",
        "test_the_runs_deadline_cuts_a_long_command"),
    Row("file size", "at most 1 GiB per file", "test_a_huge_write_is_bounded"),
    Row("memory", "each process at most half of the machine's memory; past it an allocation fails (`MemoryError`), "
        "as root, as an unprivileged user and without the sandbox",
        "test_a_runaway_allocation_gets_a_memory_error_at_the_cap"),
    Row("a trusted project's hooks", "run here, as commands do (no HOME, no network); what they write in the "
        "workspace is applied; the user's own hooks run on the host",
        "test_a_projects_hook_runs_in_the_command_sandbox_and_cannot_read_home_as_a_users_hook_can"),
    Row("what a hook starts (`setsid` daemons, double forks, a pipe kept open)", "killed when the hook ends or at "
        "its `timeout_s` (never past the run's deadline); it never holds the run",
        "test_a_double_fork_that_calls_setsid_is_killed_at_the_timeout"),
)


def markdown_table() -> str:
    lines = ["| what | a command can | held by |", "|---|---|---|"]
    lines += [f"| {r.what} | {r.can} | `{r.test}` |" for r in ROWS]
    return "\n".join(lines)


def text_table() -> str:
    return "\n".join(f"  {r.what.replace('`', '')}\n      -> {r.can.replace('`', '')}" for r in ROWS)
