"""Agent Skills: `SKILL.md` folders the project and the user keep for their agents, read as Claude Code, Codex and
Gemini CLI read them.

    found = load_skills(workspace_root, trusted=True)    # Skills: .skills (by name), .notes (one line each)
    skill = found.get("pdf")                             # Skill: .name .description .folder .place .trusted
    skill.body(), skill.files()                          # the instructions, and the files beside them

Places, nearest first (a nearer skill shadows a farther one of the same name, with a note): the workspace's
`.agents/skills/` and `.claude/skills/`, then the user's `~/.agents/skills/` and `~/.claude/skills/`. Each skill is
a folder holding `SKILL.md`: YAML front matter (`name`, `description`; the format's optional `license`,
`compatibility`, `allowed-tools`, `metadata`) and the instructions. A malformed one is named in a note and skipped.
Skills are instructions, nothing more: they change no permission (what they ask still goes through approval), and
a skill in an untrusted folder is marked so wherever it is listed.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path

from cli_agent.config import folder_trusted
from cli_agent.contracts import dataclass
from cli_agent.fs import home_folder, read_regular
from cli_agent.instructions.front_matter import Value, split_front_matter

__all__ = ["Skill", "Skills", "load_skills", "skill_places"]

SKILL_FILE = "SKILL.md"
SKILL_LIMIT = 256 * 1024  # bytes of one SKILL.md
FOLDERS_LIMIT = 200  # skill folders read from one place
FILES_LIMIT = 100  # files beside a skill that skill() lists
DESCRIPTION_LIMIT = 1024  # characters of a description, as the format says
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
PROJECT_PLACES = (".agents/skills", ".claude/skills")
USER_PLACES = ("~/.agents/skills", "~/.claude/skills")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    place: str  # where it was found: ".agents/skills" (the project's) or "~/.claude/skills" (the user's)
    trusted: bool = True  # False: from the workspace of a folder the user has not trusted
    fields: dict[str, Value] = field(default_factory=dict, compare=False)

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE

    @property
    def origin(self) -> str:
        """`.agents/skills (untrusted folder)`: where it comes from, as listings say it."""
        return self.place + ("" if self.trusted else " (untrusted folder)")

    def body(self) -> str:
        """The instructions after the front matter (read again: the file may have changed since it was listed)."""
        text = read_regular(self.path, SKILL_LIMIT, cut=True).decode("utf-8", errors="replace")
        return split_front_matter(text)[1]

    def shown_folder(self, root: Path) -> str:
        """Its folder as the model names it: relative to the workspace `root` when inside it, else absolute."""
        try:
            return self.folder.relative_to(root).as_posix()
        except ValueError:
            return str(self.folder)

    def prompt(self, root: Path, request: str = "") -> str:
        """The task `/NAME REQUEST` runs: the skill's instructions, the files beside them, and the user's request."""
        files, more = self.files()
        folder = self.shown_folder(root)
        listed = "".join(f"\n- {folder}/{f}" for f in files) + (f"\n- ... and {more} more" if more else "")
        return (f"Use the skill {self.name} (its folder: {folder}). Follow its instructions:\n\n"
                f"{self.body()}\n" + (f"\nFiles beside it:{listed}\n" if files else "")
                + f"\nThe user's request: {request.strip() or 'apply the skill to this project.'}")

    def files(self) -> tuple[list[str], int]:
        """(the files in its folder besides SKILL.md, relative to it, sorted, at most FILES_LIMIT; how many more)."""
        found: list[str] = []
        more = 0
        for top, dirs, names in os.walk(self.folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(top, name), self.folder)
                if rel == SKILL_FILE:
                    continue
                if len(found) < FILES_LIMIT:
                    found.append(rel)
                else:
                    more += 1
        return found, more


@dataclass
class Skills:
    skills: dict[str, Skill] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def __bool__(self) -> bool:
        return bool(self.skills)


def skill_places(root: Path) -> list[tuple[str, Path, bool]]:
    """(label, folder, in the workspace) of each place skills are read from, nearest first."""
    places = [(label, root / label, True) for label in PROJECT_PLACES]
    home = home_folder()
    if home is not None:
        places += [(label, home / label[2:], False) for label in USER_PLACES]
    return places


def load_skills(root: Path, *, trusted: bool | None = None) -> Skills:
    """Every skill of the workspace at `root` and of the user; `trusted`: whether the workspace's folder is (None:
    as `CLI_AGENT_TRUST` and the trust store say)."""
    found = Skills()
    trusted = folder_trusted(Path(root)) if trusted is None else trusted
    for label, place, in_workspace in skill_places(Path(root)):
        for folder in _folders(place):
            try:
                skill = read_skill(folder, label, trusted or not in_workspace)
            except (OSError, ValueError) as exc:
                found.notes.append(f"skipped a malformed skill, {folder / SKILL_FILE}: {exc}")
                continue
            if skill.name in found.skills:
                found.notes.append(f"the skill {skill.name} of {found.skills[skill.name].place} shadows the one in "
                                   f"{folder}")
                continue
            found.skills[skill.name] = skill
    return found


def _folders(place: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(place), key=lambda e: e.name)
    except OSError:  # no such place (the usual case), or unreadable
        return []
    return [Path(e.path) for e in entries if e.is_dir() and os.path.isfile(os.path.join(e.path, SKILL_FILE))
            ][:FOLDERS_LIMIT]


def read_skill(folder: Path, place: str, trusted: bool) -> Skill:
    """The skill in `folder`; ValueError (or OSError) saying what is wrong with its SKILL.md."""
    text = read_regular(folder / SKILL_FILE, SKILL_LIMIT).decode("utf-8", errors="replace")
    fields, _ = split_front_matter(text)
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not name:
        raise ValueError("has no 'name' in its front matter")
    if not _NAME.match(name) or "--" in name:
        raise ValueError(f"has a bad name {name!r}: lowercase letters, digits and single hyphens, at most 64")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("has no 'description' in its front matter")
    description = " ".join(description.split())[:DESCRIPTION_LIMIT]
    return Skill(name, description, folder, place, trusted, fields)
