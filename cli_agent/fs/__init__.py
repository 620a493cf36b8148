"""The file system beneath the workspace root: the `Workspace` (`workspace`: the only place a model-given path becomes
a file, and `apply`, the only write path), resolving a path one component at a time from the root's descriptor
(`resolve_beneath`), atomic writes (`atomic`), listing a tree (`walk`), path patterns and `.gitignore`
(`pathmatch`), a file's text format (`textfile`, `linestream`), what may never change (`protected`), what is a
credential file, for the file tools and the command sandbox alike (`credentials`), where cli-agent keeps its own
files (`paths`), the one opener of the files read on the host (`hostfile`: regular files only, never blocking,
bounded), bounded copies that never contain themselves (`copy`), and the folders that are never a workspace
(`broad`: the root, HOME and above).

May import: validated, contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.fs import atomic, linestream, paths, textfile
    from cli_agent.fs.atomic import fsync_dir
    from cli_agent.fs.broad import broad_reason, refuse_broad
    from cli_agent.fs.copy import CopyLimits, CopyTooBig, copy_tree
    from cli_agent.fs.credentials import (
        CREDENTIALS,
        ETC_SECRETS,
        HOME_PRIVATE,
        KEY_NAMES,
        credential_globs,
        etc_private,
        etc_secret_name,
        home_folder,
        own_folders,
    )
    from cli_agent.fs.hostfile import (
        CONFIG_LIMIT,
        TRACE_LIMIT,
        RegularFile,
        open_host_file,
        read_regular,
        read_regular_or_none,
    )
    from cli_agent.fs.pathmatch import IgnoreRules, compile_glob, glob_problem
    from cli_agent.fs.paths import PROJECT_DIR
    from cli_agent.fs.protected import DEFAULT_PROTECTED, protected_globs
    from cli_agent.fs.resolve_beneath import locate_in, open_dir, open_regular
    from cli_agent.fs.textfile import TextFormat
    from cli_agent.fs.workspace import Workspace

__all__ = [
    "CONFIG_LIMIT",
    "CREDENTIALS",
    "DEFAULT_PROTECTED",
    "ETC_SECRETS",
    "HOME_PRIVATE",
    "KEY_NAMES",
    "PROJECT_DIR",
    "TRACE_LIMIT",
    "CopyLimits",
    "CopyTooBig",
    "IgnoreRules",
    "RegularFile",
    "TextFormat",
    "Workspace",
    "atomic",
    "broad_reason",
    "compile_glob",
    "copy_tree",
    "credential_globs",
    "etc_private",
    "etc_secret_name",
    "fsync_dir",
    "glob_problem",
    "home_folder",
    "linestream",
    "locate_in",
    "open_dir",
    "open_host_file",
    "open_regular",
    "own_folders",
    "paths",
    "protected_globs",
    "read_regular",
    "read_regular_or_none",
    "refuse_broad",
    "textfile",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("fsync_dir",):
        from cli_agent.fs import atomic

        return getattr(atomic, name)
    if name in ("broad_reason", "refuse_broad"):
        from cli_agent.fs import broad

        return getattr(broad, name)
    if name in ("CopyLimits", "CopyTooBig", "copy_tree"):
        from cli_agent.fs import copy

        return getattr(copy, name)
    if name in (
        "CREDENTIALS",
        "ETC_SECRETS",
        "HOME_PRIVATE",
        "KEY_NAMES",
        "credential_globs",
        "etc_private",
        "etc_secret_name",
        "home_folder",
        "own_folders",
    ):
        from cli_agent.fs import credentials

        return getattr(credentials, name)
    if name in (
        "CONFIG_LIMIT",
        "RegularFile",
        "TRACE_LIMIT",
        "open_host_file",
        "read_regular",
        "read_regular_or_none",
    ):
        from cli_agent.fs import hostfile

        return getattr(hostfile, name)
    if name in ("IgnoreRules", "compile_glob", "glob_problem"):
        from cli_agent.fs import pathmatch

        return getattr(pathmatch, name)
    if name in ("PROJECT_DIR",):
        from cli_agent.fs import paths

        return getattr(paths, name)
    if name in ("DEFAULT_PROTECTED", "protected_globs"):
        from cli_agent.fs import protected

        return getattr(protected, name)
    if name in ("locate_in", "open_dir", "open_regular"):
        from cli_agent.fs import resolve_beneath

        return getattr(resolve_beneath, name)
    if name in ("TextFormat",):
        from cli_agent.fs import textfile

        return getattr(textfile, name)
    if name in ("Workspace",):
        from cli_agent.fs import workspace

        return getattr(workspace, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
