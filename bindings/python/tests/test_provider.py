"""The provider's seed 002 surface: prompt, tools in every format, names, and what each call
answers, through the installed package and its real executor."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import skillbox


def test_prompt_tools_and_names(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    assert skills.skill_names == ["probe"]
    assert "### probe" in skills.system_prompt
    assert "load_skill" in skills.system_prompt
    names = [tool["name"] for tool in skills.tools]
    assert names[:2] == ["load_skill", "use_skill"]
    assert skills.tools[0]["type"] == "function" and "parameters" in skills.tools[0]
    assert [t["function"]["name"] for t in skills.chat_completions_tools] == names
    assert [t["name"] for t in skills.tools_for("anthropic")] == names
    assert [t["name"] for t in skills.tools_for("mcp")] == names
    gemini = skills.tools_for("gemini")
    assert [d["name"] for d in gemini[0]["functionDeclarations"]] == names
    with pytest.raises(ValueError, match='unknown tool format "xml"; use one of "responses"'):
        skills.tools_for("xml")


def test_include_and_exclude_filter_by_name(skills_dir: Path) -> None:
    (skills_dir / "other").mkdir()
    (skills_dir / "other" / "SKILL.md").write_text("---\nname: other\ndescription: Another.\n---\nHi.\n")
    assert skillbox.create_skills_provider(skills_dir).skill_names == ["other", "probe"]
    assert skillbox.create_skills_provider(skills_dir, include=["oth*"]).skill_names == ["other"]
    assert skillbox.create_skills_provider(skills_dir, exclude=["other"]).skill_names == ["probe"]
    # A list of roots, as the seed's single folder generalises.
    assert skillbox.create_skills_provider([skills_dir]).skill_names == ["other", "probe"]


def test_load_skill_answers_the_instructions_and_use_skill_the_seeds_result(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    instructions = skills.handle_tool_call("load_skill", {"skill": "probe"})
    assert isinstance(instructions, str)
    assert "Run `scripts/multiply.py A B`" in instructions
    assert "description:" not in instructions
    result = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["6", "7"]})
    # The seed's fields, and skillbox's own: how long it ran and how strong the sandbox was.
    assert {key: result[key] for key in ("success", "stdout", "stderr", "exitCode")} == {
        "success": True,
        "stdout": "42\n",
        "stderr": "",
        "exitCode": 0,
    }
    assert "error" not in result
    assert result["sandbox"] == "full"
    assert isinstance(result["durationMs"], int)


def test_arguments_may_be_the_models_text(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    text = '{"skill": "probe", "script": "scripts/multiply.py", "args": ["2", "21"]}'
    assert skills.handle_tool_call("use_skill", text)["stdout"] == "42\n"
    broken = skills.handle_tool_call("use_skill", '{"skill": "probe", ')
    assert broken["errorType"] == "InvalidArgs"
    assert "not valid JSON" in broken["error"]


def test_failures_come_back_as_the_seeds_kinds(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)

    def kind(args: dict) -> str:
        answer = skills.handle_tool_call("use_skill", args)
        # Every failure is the seed's whole result, whether anything ran or not.
        assert answer["success"] is False and answer["error"], answer
        assert isinstance(answer["stdout"], str) and isinstance(answer["stderr"], str), answer
        assert "exitCode" in answer, answer
        return answer["errorType"]

    assert kind({"skill": "nope", "script": "x.py"}) == "SkillNotFound"
    assert kind({"skill": "probe", "script": "scripts/none.py"}) == "ScriptNotFound"
    assert kind({"skill": "probe", "script": "../outside.py"}) == "ScriptNotAllowed"
    assert kind({"skill": "probe", "script": "/usr/bin/id"}) == "ScriptNotAllowed"
    assert kind({"skill": "probe", "script": "scripts/multiply.py", "args": {"a": 1}}) == "InvalidArgs"
    failed = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/fail.py"})
    assert (failed["errorType"], failed["exitCode"], failed["stderr"]) == ("ExecutionFailed", 3, "bad\n")
    unknown = skills.handle_tool_call("no_such_tool", {})
    assert "no_such_tool" in unknown["error"]


def test_bad_options_are_named(skills_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(skillbox.SkillboxError, match="does-not-exist"):
        skillbox.create_skills_provider(tmp_path / "does-not-exist")
    with pytest.raises(ValueError, match="`sandbox` must be"):
        skillbox.create_skills_provider(skills_dir, sandbox="strong")
    with pytest.raises(TypeError, match="colour"):
        skillbox.create_skills_provider(skills_dir, colour="blue")
    with pytest.raises(ValueError, match=r"`secrets\[\"TOKEN\"\]` must be"):
        skillbox.create_skills_provider(skills_dir, secrets={"TOKEN": 3})
    with pytest.raises(skillbox.SkillboxError, match="overlaps the skill root"):
        skillbox.create_skills_provider(skills_dir, cwd=skills_dir)
    skills = skillbox.create_skills_provider(skills_dir)
    with pytest.raises(TypeError, match="`args` must be a dict"):
        skills.handle_tool_call("load_skill", {"skill": object()})


def test_a_session_follows_the_active_skill(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    session = skills.session()
    assert session.active_skill is None
    assert isinstance(session.handle_tool_call("load_skill", {"skill": "probe"}), str)
    assert session.active_skill == "probe"
    assert [t["name"] for t in session.tools_for("responses")] == [t["name"] for t in skills.tools]


def test_the_package_gives_the_skillbox_command(skills_dir: Path) -> None:
    command = shutil.which("skillbox", path=str(Path(sys.executable).parent))
    assert command is not None, "the wheel installs a `skillbox` script"
    listed = subprocess.run([command, "list", "--json", str(skills_dir)], capture_output=True, text=True, check=True)
    assert "probe" in listed.stdout
    ran = subprocess.run(
        [command, "call", "use_skill", "--args", json.dumps({"skill": "probe", "script": "scripts/multiply.py", "args": ["3", "5"]}), str(skills_dir)],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert '"stdout": "15\\n"' in ran.stdout
