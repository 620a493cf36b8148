"""The file system beneath the workspace root: the `Workspace` (`workspace`: the only place a model-given path becomes
a file, and `apply`, the only write path), resolving a path one component at a time from the root's descriptor
(`resolve_beneath`), atomic writes (`atomic`), listing a tree (`walk`), path patterns and `.gitignore`
(`pathmatch`), a file's text format (`textfile`, `linestream`), what may never change (`protected`), what is a
credential file, for the file tools and the command sandbox alike (`credentials`), and where cli-agent keeps its own
files (`paths`).

May import: validated, contracts.
"""
