"""cli-agent: an interactive terminal coding agent.

Importing this package does nothing but define the version: no directory is created, nothing heavy is imported.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
