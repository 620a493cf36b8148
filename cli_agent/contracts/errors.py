"""The one error hierarchy of cli-agent, each class with the exit code a script can rely on.

    CliAgentError ................................ 1  runtime failure (internal error)
    ├── UsageError ............................... 2  bad flag, argument or input
    │   ├── ConfigError .......................... 2  bad config file, key or value
    │   ├── SpecError ............................ 2  bad tool spec file
    │   ├── WorkflowError ........................ 2  bad workflow file or workflow arguments
    │   ├── TraceError ........................... 2  unknown trace format, truncated or damaged trace
    │   └── MissingCredentialsError .............. 2  no API key where the provider needs one
    ├── ProviderError ............................ 1  the model could not be reached or failed
    │   └── RetryableProviderError ............... 1  a failure worth retrying (429, 5xx, connection reset)
    ├── DeniedError .............................. 3  a change was denied
    ├── StepLimitError ........................... 4  max_steps reached
    ├── RunTimeoutError .......................... 5  timeout_s reached
    ├── UnusableOutputError ...................... 6  three malformed model replies in a row
    ├── ChangeFailedError ........................ 7  the run ended on a failed change, none applied after it
    ├── TestsFailedError ......................... 8  the run changed files and the project's tests still fail
    ├── UnverifiedError .......................... 9  proof was required, and the run's changes have none
    ├── Interrupted .............................. 130 SIGINT
    └── Terminated ............................... 143 SIGTERM

    TerminateSignal (a BaseException, like KeyboardInterrupt): raised by the SIGTERM handler so that it unwinds
    through `except Exception` blocks; the loop turns it into a run that stopped with 143.

`cli.py` turns these into exit codes in one place; nothing else calls `sys.exit`. The message of every error is one
line meant for the user. Tool failures are not errors here: they become error envelopes for the model.
"""

from __future__ import annotations

__all__ = [
    "CliAgentError", "ConfigError", "DeniedError", "MissingCredentialsError", "ProviderError",
    "RetryableProviderError", "RunTimeoutError", "SpecError", "TraceError", "UsageError", "WorkflowError",
]


class CliAgentError(Exception):
    """Base class; its message is one line for the user."""

    exit_code = 1
    reported = False  # True when `--output json` already printed the run's object saying so

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()) or self.__class__.__name__)

    @property
    def message(self) -> str:
        return str(self)


class UsageError(CliAgentError):
    exit_code = 2


class ConfigError(UsageError):
    pass


class SpecError(UsageError):
    pass


class WorkflowError(UsageError):
    pass


class TraceError(UsageError):
    pass


class MissingCredentialsError(UsageError):
    pass


class ProviderError(CliAgentError):
    exit_code = 1


class RetryableProviderError(ProviderError):
    pass


class DeniedError(CliAgentError):
    exit_code = 3


class StepLimitError(CliAgentError):
    exit_code = 4


class RunTimeoutError(CliAgentError):
    exit_code = 5


class UnusableOutputError(CliAgentError):
    exit_code = 6


class ChangeFailedError(CliAgentError):
    exit_code = 7


class TestsFailedError(CliAgentError):
    exit_code = 8


class UnverifiedError(CliAgentError):
    """`verify = "required"` (`--require-verified`): the run changed files, and no test proved them (none found,
    or they could not run)."""

    exit_code = 9


class Interrupted(CliAgentError):
    exit_code = 130


class Terminated(CliAgentError):
    exit_code = 143


class TerminateSignal(BaseException):
    """SIGTERM arrived. A BaseException so that no `except Exception` swallows it."""
