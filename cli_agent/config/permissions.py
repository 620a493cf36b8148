"""The `[[permissions]]` rules: what the user (or a project) says once about what the agent may do, and the pure
function that finds the rule deciding a call (`decide`).

    [[permissions]]
    name = "no-push"                 # optional: how the rule is named when it decides (else made of its fields)
    decision = "deny"                # allow | ask | deny
    tool = "run_command"             # a tool name or a glob ("*", "github__*"); default "*"
    prefix = ["git", "push"]         # run_command: the first words of a command
    paths = ["src/**"]               # file tools: gitignore-style globs, relative to the workspace
    domains = ["docs.python.org"]    # web_fetch: a host, or "*.example.com" for its subdomains
    reason = "pushing is for people" # shown when the rule decides
    match = ["git push origin main"] # examples the rule must match, checked when the config loads
    not_match = ["git status"]       # examples it must not match

A rule matches a call when its tool matches and every one of prefix, paths and domains it names matches. Deny and ask
rules match when any part of the call does (any command of a compound line, any path, the words anywhere in a line
that cannot be parsed); allow rules only when every part does (each command of `a && b; c | d`, each path) and the
line parses: a subshell, backticks or `$( )` never match an allow. Deny rules are checked first, then ask, then
allow; the first match of the strictest decision wins.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import field, replace
from typing import Literal
from urllib.parse import urlsplit

from cli_agent.contracts import dataclass
from cli_agent.fs import compile_glob, glob_problem
from cli_agent.validated import rule

__all__ = ["PermissionRule", "Subject", "command_words", "decide", "example_problem"]

Decision = Literal["allow", "ask", "deny"]
ORDER: tuple[Decision, ...] = ("deny", "ask", "allow")
# commands that run the command after their own options: looked through
WRAPPERS = {"env": {"-u", "-C", "-S"}, "timeout": {"-s", "-k"}, "nice": {"-n"}, "nohup": set(), "time": {"-f", "-o"},
            "command": set(), "exec": set(), "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n"},
            "xargs": {"-n", "-I", "-L", "-P", "-d", "-s", "-E", "-a"}}
# git's own options before its subcommand (`git -C dir push`): looked through; these take the next word
GIT_TAKES = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "|&", ";;", "\n"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_UNPARSEABLE = ("$(", "`", "<(", ">(")


def _check_paths(value: list[str]) -> list[str]:
    for pattern in value:
        problem = glob_problem(pattern)
        if problem is not None:
            raise ValueError(f"paths: {pattern!r} is not a valid glob: {problem}")
    return value


@dataclass(frozen=True, kw_only=True)
class PermissionRule:
    decision: Decision
    tool: str = rule("*", min_length=1, max_length=200)
    name: str = rule("", max_length=100)
    prefix: list[str] = rule(factory=list)
    paths: list[str] = rule(factory=list, after=_check_paths)
    domains: list[str] = rule(factory=list)
    reason: str = rule("", max_length=500)
    match: list[str] = rule(factory=list)
    not_match: list[str] = rule(factory=list)
    origin: str = ""  # where it was written ("project config:12"): set by the loader, whatever the file says
    file: str = ""  # the file it was written in: set by the loader

    @property
    def label(self) -> str:
        """The rule's name, else what it says (`deny run_command git push`)."""
        if self.name:
            return self.name
        what = " ".join(self.prefix) or ", ".join(self.paths) or ", ".join(self.domains)
        return f"{self.decision} {self.tool}" + (f" {what}" if what else "")

    def describe(self) -> str:
        """`no-push (user config:3)`."""
        return f"{self.label} ({self.origin})" if self.origin else self.label


@dataclass(frozen=True)
class Subject:
    """What the rules look at in a call: its tool, the command it runs, the paths it touches, the host it reaches."""

    tool: str
    command: str | None = None
    paths: tuple[str, ...] = ()
    host: str | None = None


@dataclass(frozen=True)
class _Words:
    commands: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    parsed: bool = True


def command_words(line: str) -> tuple[tuple[str, ...], ...] | None:
    """The words of each command of a shell line (`a && b | c`), wrappers (`env X=1`, `timeout 5`, `nice`) and
    leading assignments looked through; None when the line can't be read as plain commands (a subshell,
    backticks, `$( )`, an unclosed quote)."""
    if any(mark in line for mark in _UNPARSEABLE):
        return None
    lexer = shlex.shlex(line, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    commands: list[tuple[str, ...]] = []
    current: list[str] = []
    for token in tokens:
        if token in _SEPARATORS:
            commands.append(tuple(current))
            current = []
        elif "(" in token or ")" in token:
            return None
        else:
            current.append(token)
    commands.append(tuple(current))
    return tuple(words for words in map(_unwrapped, commands) if words)


def _unwrapped(words: tuple[str, ...]) -> tuple[str, ...]:
    """A command's words without its redirections, leading assignments and wrappers."""
    plain: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif set(word) <= set("<>&"):  # a redirection (`>`, `>>`, `>&`, `<`): its target goes with it
            skip = True
        else:
            plain.append(word)
    rest = list(plain)
    while rest:
        if _ASSIGNMENT.match(rest[0]):
            rest.pop(0)
            continue
        takes = WRAPPERS.get(os.path.basename(rest[0]))
        if takes is None:
            break
        wrapper = os.path.basename(rest.pop(0))
        while rest and (rest[0].startswith("-") or (wrapper == "env" and _ASSIGNMENT.match(rest[0]))):
            option = rest.pop(0)
            if option in takes and rest:
                rest.pop(0)
        if wrapper == "timeout" and rest:
            rest.pop(0)  # the duration
    if rest and os.path.basename(rest[0]) == "git":
        rest = [rest[0], *_git_subcommand(rest[1:])]
    return tuple(rest)


def _git_subcommand(words: list[str]) -> list[str]:
    """git's words from its subcommand on: its own options (`-C dir`, `-c key=value`, `--git-dir=...`,
    `--no-pager`) looked through."""
    while words and words[0].startswith("-") and words[0] != "--":
        option = words.pop(0)
        if option in GIT_TAKES and words:  # `--git-dir X`; `--git-dir=X` and `-Cdir` carry their value
            words.pop(0)
    return words


def _starts(words: tuple[str, ...], prefix: list[str], loose: bool) -> bool:
    if len(words) < len(prefix) or not prefix:
        return False
    head = list(words[: len(prefix)])
    if loose:
        head[0] = os.path.basename(head[0])
    return head == prefix


def _loosely_in(line: str, prefix: list[str]) -> bool:
    """The prefix's words one after the other anywhere in the line (quotes, `$( )` and separators ignored)."""
    words = [os.path.basename(w) for w in re.split(r"[\s;&|()`$\"'<>{}]+", line) if w]
    for i in range(len(words) - 1, -1, -1):  # git's own options (`git -C dir push`) looked through here too
        if words[i] == "git":
            words[i + 1:] = _git_subcommand(words[i + 1:])
    n = len(prefix)
    return any(words[i:i + n] == prefix for i in range(len(words) - n + 1))


def _prefix_matches(rule_: PermissionRule, command: str) -> bool:
    commands = command_words(command)
    if rule_.decision == "allow":
        return bool(commands) and commands is not None and all(_starts(w, rule_.prefix, False) for w in commands)
    if commands is not None and any(_starts(w, rule_.prefix, True) for w in commands):
        return True
    return _loosely_in(command, rule_.prefix)


def _path_matches(pattern: str, path: str) -> bool:
    """gitignore-style: the path, or one of its folders, matches the pattern."""
    glob = compile_glob(pattern)
    parts = path.strip("/").split("/")
    return any(glob.fullmatch("/".join(parts[:i])) for i in range(len(parts), 0, -1))


def _host_matches(pattern: str, host: str) -> bool:
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def matches(rule_: PermissionRule, subject: Subject) -> bool:
    """Whether the rule covers the call: its tool and every one of prefix, paths and domains it names."""
    if not fnmatch.fnmatchcase(subject.tool, rule_.tool):
        return False
    every = rule_.decision == "allow"
    if rule_.prefix and (subject.command is None or not _prefix_matches(rule_, subject.command)):
        return False
    if rule_.paths:
        hits = [any(_path_matches(p, path) for p in rule_.paths) for path in subject.paths]
        if not hits or not (all(hits) if every else any(hits)):
            return False
    return not rule_.domains or bool(subject.host and any(_host_matches(d, subject.host) for d in rule_.domains))


def decide(rules: tuple[PermissionRule, ...] | list[PermissionRule], subject: Subject) -> PermissionRule | None:
    """The rule that decides the call: the first deny that matches, else the first ask, else the first allow;
    None when no rule matches."""
    for decision in ORDER:
        for candidate in rules:
            if candidate.decision == decision and matches(candidate, subject):
                return candidate
    return None


def _example_subject(rule_: PermissionRule, example: str) -> Subject:
    """What an example of the rule stands for: a command line (prefix), a path (paths), a URL or host (domains),
    else a tool name."""
    if rule_.prefix:
        return Subject(rule_.tool, command=example)
    if rule_.paths:
        return Subject(rule_.tool, paths=(example,))
    if rule_.domains:
        return Subject(rule_.tool, host=urlsplit(example).hostname if "://" in example else example)
    return Subject(example)


def example_problem(rule_: PermissionRule) -> str | None:
    """Why the rule's own examples contradict it (a `match` it does not match, a `not_match` it does); None when
    they agree."""
    any_tool = replace(rule_, tool="*") if rule_.prefix or rule_.paths or rule_.domains else rule_
    for example in rule_.match:
        if not matches(any_tool, _example_subject(rule_, example)):
            return f"its match example {example!r} does not match it"
    for example in rule_.not_match:
        if matches(any_tool, _example_subject(rule_, example)):
            return f"its not_match example {example!r} matches it"
    return None
