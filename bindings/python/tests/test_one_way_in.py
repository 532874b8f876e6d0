"""One way in: the binding is a door like the CLI's. A hidden skill, bad arguments and an
unknown tool get from ``handle_tool_call`` the answer ``skillbox call`` (the command this
package carries) gives, word for word: both go through the same door policy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import skillbox

from conftest import write_skills

CASES = [
    ("hidden", "read_skill_file", {"skill": "secret", "path": "SKILL.md"}),
    ("bad", "read_skill_file", {"skill": "visible", "path": 5}),
    ("unknown", "no_such_tool", {}),
]


def cli_answer(root: Path, tool: str, arguments: dict) -> str:
    binary = Path(skillbox.__file__).resolve().parent / "_bin" / "skillbox"
    done = subprocess.run(
        [str(binary), "call", tool, str(root), "--args", json.dumps(arguments)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)["error"]


def test_the_binding_answers_as_the_cli_does(tmp_path: Path) -> None:
    root = write_skills(
        tmp_path / "skills",
        {
            "secret/SKILL.md": "---\nname: secret\ndescription: Only a person may start this.\n"
            "disable-model-invocation: true\n---\nSecret steps.\n",
            "visible/SKILL.md": "---\nname: visible\ndescription: A skill anyone may read.\n---\n"
            "Read references/notes.md.\n",
            "visible/references/notes.md": "Notes.\n",
        },
    )
    provider = skillbox.create_skills_provider(root)
    for case, tool, arguments in CASES:
        answer = provider.handle_tool_call(tool, arguments)
        assert isinstance(answer, dict) and set(answer) == {"error"}, (case, answer)
        cli = cli_answer(root, tool, arguments)
        if case == "unknown":
            # The CLI's door offers the protocol's tools too; the sentence is the same.
            prefix = "unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file"
            assert answer["error"].startswith(prefix) and cli.startswith(prefix), (answer, cli)
        else:
            assert answer["error"] == cli, (case, answer, cli)
    assert "no skill named `secret`" in provider.handle_tool_call(*CASES[0][1:])["error"]
