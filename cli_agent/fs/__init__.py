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

from cli_agent.fs import atomic, linestream, paths, textfile
from cli_agent.fs.atomic import *
from cli_agent.fs.broad import *
from cli_agent.fs.copy import *
from cli_agent.fs.credentials import *
from cli_agent.fs.hostfile import *
from cli_agent.fs.pathmatch import *
from cli_agent.fs.paths import *
from cli_agent.fs.protected import *
from cli_agent.fs.resolve_beneath import *
from cli_agent.fs.textfile import *
from cli_agent.fs.workspace import *

__all__ = [
    "CONFIG_LIMIT", "CREDENTIALS", "DEFAULT_PROTECTED", "ETC_SECRETS", "HOME_PRIVATE", "KEY_NAMES", "PROJECT_DIR",
    "TRACE_LIMIT", "CopyLimits", "CopyTooBig", "IgnoreRules", "RegularFile", "TextFormat", "Workspace", "atomic",
    "broad_reason", "compile_glob", "copy_tree", "credential_globs", "etc_private", "etc_secret_name", "fsync_dir",
    "glob_problem", "home_folder", "linestream", "locate_in", "open_dir", "open_host_file", "open_regular",
    "own_folders", "paths", "protected_globs", "read_regular", "read_regular_or_none", "refuse_broad", "textfile",
]
