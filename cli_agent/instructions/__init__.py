"""What a team already wrote for its agents: `SKILL.md` folders (`skills`, their front matter read by
`front_matter` without a YAML library) and the instruction files, `AGENTS.md` (else `CLAUDE.md` or `GEMINI.md`)
from the workspace root down (`instruction_files`).

May import: config, fs, validated, contracts.
"""

from cli_agent.instructions.instruction_files import *
from cli_agent.instructions.skills import *

__all__ = [
    "INSTRUCTION_NAMES", "Instructions", "Skill", "Skills", "instruction_file", "load_skills", "nested_instructions",
    "read_instructions", "skill_places",
]
