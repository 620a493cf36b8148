"""Seed 004's three scenarios end to end through the real CLI, with the scripted provider."""

from __future__ import annotations

import json

import pytest

from cli_agent.cli import run
from cli_agent.providers.scripted import ScriptedProvider


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CI", "true")


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def one_shot(ws, replies, capsys, *extra):
    provider = ScriptedProvider(replies)
    code = run(["-C", str(ws), "--model", "scripted", "-o", "json", "-y", *extra, "-p", "task"],
               provider_factory=lambda settings: provider)
    return code, json.loads(capsys.readouterr().out), provider


def test_create_a_small_app_from_nothing(tmp_path, capsys):
    ws = tmp_path / "calc"
    ws.mkdir()
    replies = [
        {"text": "Let me check what exists.", "tool_calls": [call("list_files")]},
        {"tool_calls": [call("create_file", path="index.html", content="<script src='calc.js'></script>\n"),
                        call("create_file", path="styles.css", content="body { margin: 0 }\n"),
                        call("create_file", path="calc.js", content="const add = (a, b) => a + b;\n")]},
        {"text": "I created a calculator: open index.html."},
    ]
    code, report, provider = one_shot(ws, replies, capsys)
    assert code == 0 and report["answer"].startswith("I created")
    assert sorted(p.name for p in ws.iterdir()) == ["calc.js", "index.html", "styles.css"]
    assert report["files_changed"] == ["index.html", "styles.css", "calc.js"]
    first_result = json.loads(provider.requests[1].messages[-1].content)
    assert first_result["ok"] and first_result["data"]["entries"] == []
    assert [len(r.messages) for r in provider.requests] == [2, 4, 8]


def test_read_then_update_an_existing_file(tmp_path, capsys):
    ws = tmp_path / "site"
    ws.mkdir()
    (ws / "style.css").write_text("body {\n  color: black;\n}\n")
    replies = [
        {"tool_calls": [call("read_file", path="style.css")]},
        {"tool_calls": [call("edit_file", path="style.css", old="color: black;", new="color: navy;")]},
        {"text": "The text is navy now."},
    ]
    code, report, provider = one_shot(ws, replies, capsys)
    assert code == 0
    assert (ws / "style.css").read_text() == "body {\n  color: navy;\n}\n"
    read_result = json.loads(provider.requests[1].messages[-1].content)
    assert "color: black" in read_result["data"]["content"]
    assert [c["tool"] for c in report["tool_calls"]] == ["read_file", "edit_file"]


def test_recover_from_a_refused_path(tmp_path, capsys):
    ws = tmp_path / "app"
    ws.mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    replies = [
        {"tool_calls": [call("create_file", path="../secret.txt", content="pwned")]},
        {"tool_calls": [call("create_file", path="notes/secret.txt", content="kept inside")]},
        {"text": "Saved inside the workspace instead."},
    ]
    code, report, provider = one_shot(ws, replies, capsys)
    assert code == 0
    assert (tmp_path / "secret.txt").read_text() == "outside"
    assert (ws / "notes" / "secret.txt").read_text() == "kept inside"
    refusal = json.loads(provider.requests[1].messages[-1].content)
    assert refusal["ok"] is False and refusal["errors"], "the model is told why, so it can recover"
    assert [c["ok"] for c in report["tool_calls"]] == [False, True]
