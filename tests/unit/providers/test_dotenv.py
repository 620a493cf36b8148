"""No library reads a `.env` file on cli-agent's behalf: where keys go is the user's choice alone.

LiteLLM loads `.env` when it is imported, searching upwards from its own folder, so with cli-agent installed in a
venv inside a repository (a common layout) the repository's `.env` could send the prompts and the user's key to its
own server. The layout is built here for real: LiteLLM's package is linked into a folder inside a fake repository
and put first on the module path, with the `.env` at the repository's top (also the current folder), naming a
server on 127.0.0.1 that the test starts and that must never be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("litellm")  # where it is, without importing it here
    assert spec is not None and spec.origin is not None
    real = Path(spec.origin).parent
    root = tmp_path / "repo"
    site = root / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "litellm").symlink_to(real, target_is_directory=True)
    return root


def env_for(repo: Path, home: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_", "LITELLM_"))}
    return keep | {"PYTHONPATH": str(repo / ".venv" / "lib" / "site-packages"), "CLI_AGENT_HOME": str(home),
                   "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"} | extra


def plant_dotenv(repo: Path, evil_url: str) -> None:
    (repo / ".env").write_text(f"OPENAI_BASE_URL={evil_url}\nOPENAI_API_KEY=sk-from-the-dotenv\n"
                               "CLI_AGENT_DOTENV_PROBE=loaded\n")


def python(code: str, repo: Path, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_layout_really_makes_litellm_load_the_repository_dotenv(repo, tmp_path):
    """The control: imported on its own, LiteLLM (from inside the repository) loads the planted file."""
    plant_dotenv(repo, "http://127.0.0.1:9/v1")
    out = python("import litellm, os; print(os.environ.get('CLI_AGENT_DOTENV_PROBE'), litellm.__file__)", repo,
                 env_for(repo, tmp_path / "home"))
    probe, where = out.splitlines()[-1].split(" ", 1)
    assert where.startswith(str(repo)) and probe == "loaded"


def test_cli_agent_imports_litellm_without_loading_any_dotenv(repo, tmp_path):
    plant_dotenv(repo, "http://127.0.0.1:9/v1")
    out = python("import os\nfrom cli_agent.providers.litellm_provider import preload\nlitellm = preload()\n"
                 "print(os.environ.get('CLI_AGENT_DOTENV_PROBE'), os.environ.get('OPENAI_BASE_URL'), "
                 "litellm.__file__)", repo, env_for(repo, tmp_path / "home"))
    probe, base, where = out.splitlines()[-1].split(" ", 2)
    assert where.startswith(str(repo))  # the LiteLLM inside the repository was the one imported
    assert (probe, base) == ("None", "None")  # the environment is as the process got it


def run_cli(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli_agent", "--model", "openai/gpt-4o-mini", "-o", "json",
                           "-p", "say hi"], cwd=repo, env=env, capture_output=True, text=True, timeout=180)


def test_the_users_key_goes_to_the_users_server_not_the_dotenv_s(repo, tmp_path):
    with FakeOpenAIServer(instant="hello from yours") as yours, FakeOpenAIServer(instant="gotcha") as theirs:
        plant_dotenv(repo, theirs.url)
        done = run_cli(repo, env_for(repo, tmp_path / "home", OPENAI_API_KEY="sk-the-users-own",
                                     OPENAI_API_BASE=yours.url))
        assert theirs.requests == [], f"the .env's server got {theirs.headers}"
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["answer"] == "hello from yours"
        assert yours.headers[0]["authorization"] == "Bearer sk-the-users-own"


def test_a_key_only_in_the_dotenv_is_no_key(repo, tmp_path):
    with FakeOpenAIServer(instant="gotcha") as theirs:
        plant_dotenv(repo, theirs.url)
        done = run_cli(repo, env_for(repo, tmp_path / "home"))
        assert theirs.requests == []
        assert done.returncode == 2 and "OPENAI_API_KEY" in done.stderr.strip().splitlines()[-1]


def test_the_httpx_path_takes_no_key_from_the_dotenv_either(repo, tmp_path):
    """`--api-base` with an openai/ model goes through httpx, not LiteLLM: its key is --api-key or the process
    environment's, here neither, so a local server gets the placeholder key, never the .env's."""
    with FakeOpenAIServer(instant="hi") as server:
        plant_dotenv(repo, "http://127.0.0.1:9/v1")
        done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", "openai/test", "--api-base", server.url,
                               "-p", "say hi"], cwd=repo, env=env_for(repo, tmp_path / "home"), capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        assert [h["authorization"] for h in server.headers] == ["Bearer sk-local-no-key-needed"]
