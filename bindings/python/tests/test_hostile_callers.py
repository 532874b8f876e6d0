"""The binding against hostile callers: a model writing tool-call arguments, a skill's scripts,
and an embedding application that gets its options or callbacks wrong. The tests marked
``xfail(strict=True)`` are holes found by an attack review: each states what should happen,
fails today, and turns into an unexpected pass (a failure) once fixed, when the mark goes."""

from __future__ import annotations

import asyncio
import enum
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import skillbox

from conftest import PROBE_SKILL, write_skills

MULTIPLY = {"skill": "probe", "script": "scripts/multiply.py", "args": ["6", "7"]}


class Decision(enum.Enum):
    """An application's own approval type: every member is truthy."""

    ALLOW = "allow"
    DENY = "deny"


@pytest.mark.parametrize(
    "answer",
    [{"allow": False}, Decision.DENY, ["deny"], object()],
    ids=["dict", "enum", "list", "object"],
)
def test_an_approval_answer_other_than_true_refuses(skills_dir: Path, answer: object) -> None:
    skills = skillbox.create_skills_provider(skills_dir, on_approval=lambda _request: answer)
    ran = skills.handle_tool_call("use_skill", MULTIPLY)
    assert ran.get("errorType") == "ScriptNotAllowed", ran


@pytest.mark.xfail(
    strict=True,
    reason="hole: a synchronous on_approval asked by ahandle_tool_call runs on one of the shared "
    "runtime's two worker threads; two waiting for a person stall every skillbox call in "
    "the process (run sync callbacks off the workers, e.g. spawn_blocking)",
)
async def test_a_slow_approval_on_the_async_path_stalls_no_other_call(skills_dir: Path) -> None:
    def slow_reviewer(_request: dict) -> bool:
        time.sleep(3)
        return True

    reviewed = skillbox.create_skills_provider(skills_dir, on_approval=slow_reviewer)
    waiting = [asyncio.ensure_future(reviewed.ahandle_tool_call("use_skill", MULTIPLY)) for _ in range(2)]
    await asyncio.sleep(0.3)
    other = skillbox.create_skills_provider(skills_dir)
    started = time.monotonic()
    instructions = await other.ahandle_tool_call("load_skill", {"skill": "probe"})
    elapsed = time.monotonic() - started
    await asyncio.gather(*waiting)
    assert "# Probe" in instructions
    assert elapsed < 1.0, f"an unrelated load_skill waited {elapsed:.1f} s for another provider's reviewer"


@pytest.mark.xfail(
    strict=True,
    reason="hole: a blocking call made inside on_approval (to show the person the skill) is "
    "answered 'await the async call instead', which a sync callback cannot do",
)
def test_an_approval_callback_may_read_through_the_provider(skills_dir: Path) -> None:
    shown: list = []
    holder: dict = {}

    def reviewer(request: dict) -> bool:
        shown.append(holder["skills"].handle_tool_call("load_skill", {"skill": request["skill"]}))
        return True

    holder["skills"] = skillbox.create_skills_provider(skills_dir, on_approval=reviewer)
    ran = holder["skills"].handle_tool_call("use_skill", MULTIPLY)
    assert ran["stdout"] == "42\n", ran
    assert isinstance(shown[0], str) and "# Probe" in shown[0], shown


FORKED_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import skillbox
    skills = skillbox.create_skills_provider(sys.argv[1])
    skills.handle_tool_call("load_skill", {"skill": "probe"})
    child = os.fork()
    if child == 0:
        signal.alarm(8)
        try:
            answer = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["6", "7"]})
            print("child:", answer.get("stdout") or answer.get("error"), flush=True)
        except Exception as error:
            print("child raised:", error, flush=True)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    print("child status:", os.waitstatus_to_exitcode(status))
    """
)


def test_a_forked_child_is_told_to_open_its_own_provider(skills_dir: Path) -> None:
    """A child forked after skillbox started (multiprocessing's default on Linux, gunicorn
    --preload) has none of its threads: a call there is refused with what to do, never left
    waiting forever."""
    done = subprocess.run(
        [sys.executable, "-c", FORKED_CHILD, str(skills_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # -14: the child hung until its alarm went off.
    assert "child status: 0" in done.stdout, done.stdout
    assert "forked from it" in done.stdout and "child: 42" not in done.stdout, done.stdout


@pytest.mark.xfail(
    strict=True,
    reason="hole: values Python's json module gives for a model's text (a lone surrogate from "
    "\\ud800, an integer past 64 bits) make handle_tool_call raise TypeError instead of "
    "answering InvalidArgs, so the agent loop breaks instead of the model recovering",
)
@pytest.mark.parametrize(
    "model_text",
    [
        '{"skill": "probe", "script": "scripts/multiply.py", "args": ["\\ud800", "1"]}',
        '{"skill": "probe", "script": "scripts/multiply.py", "args": [100000000000000000000000, "1"]}',
    ],
    ids=["lone-surrogate", "big-integer"],
)
def test_what_json_loads_makes_of_a_models_text_is_answered(skills_dir: Path, model_text: str) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    answer = skills.handle_tool_call("use_skill", json.loads(model_text))
    assert answer["errorType"] == "InvalidArgs", answer


DEEP_ARGUMENTS = textwrap.dedent(
    """
    import sys
    import skillbox
    skills = skillbox.create_skills_provider(sys.argv[1])
    arguments = {"skill": "probe", "script": "scripts/multiply.py"}
    if sys.argv[2] == "cycle":
        arguments["args"] = arguments
    else:
        nested = []
        for _ in range(int(sys.argv[2])):
            nested = [nested]
        arguments["args"] = nested
    try:
        print("answered:", skills.handle_tool_call("use_skill", arguments).get("errorType"))
    except (TypeError, ValueError, RecursionError) as error:
        print("raised:", type(error).__name__)
    """
)


@pytest.mark.parametrize("shape", ["100000", "cycle"])
def test_deep_or_cyclic_arguments_do_not_kill_the_interpreter(skills_dir: Path, shape: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEEP_ARGUMENTS, str(skills_dir), shape],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"the interpreter ended with {done.returncode} (-11: SIGSEGV)"
    assert "answered: InvalidArgs" in done.stdout or "raised:" in done.stdout, done.stdout


def test_an_argument_past_the_kernels_limit_is_invalid_args(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    answer = skills.handle_tool_call(
        "use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["1" * 200_000, "1"]}
    )
    assert answer["errorType"] == "InvalidArgs", answer


def test_a_sandbox_helper_others_can_replace_is_refused(skills_dir: Path, tmp_path: Path) -> None:
    helper = tmp_path / "skillbox-sandbox"
    shutil.copy(skillbox.sandbox_helper(), helper)
    os.chmod(helper, 0o777)
    with pytest.raises(skillbox.SkillboxError, match="skillbox-sandbox"):
        skillbox.create_skills_provider(skills_dir, sandbox_helper=str(helper), runtime_dir=str(tmp_path / "runtime"))


@pytest.mark.xfail(
    strict=True,
    reason="hole: every root a binding opens is explicit, so a clone's `.agents/skills` named "
    "by path runs its scripts, where `skillbox call` in that clone answers Untrusted; the "
    "default trust rule gives a library caller no trust gate at all",
)
def test_a_projects_default_skill_folder_keeps_the_trust_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    os.chmod(tmp_path, 0o755)
    clone = tmp_path / "clone"
    write_skills(
        clone / ".agents" / "skills",
        {
            "probe/SKILL.md": PROBE_SKILL,
            "probe/scripts/multiply.py": "import sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
        },
    )
    os.chmod(clone, 0o755)
    os.chmod(clone / ".agents", 0o755)
    skills = skillbox.create_skills_provider(clone / ".agents" / "skills")
    answer = skills.handle_tool_call("use_skill", MULTIPLY)
    assert answer.get("errorType") == "Untrusted", answer


def test_a_cwd_that_is_a_file_is_refused_when_opening(skills_dir: Path, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("x")
    with pytest.raises(skillbox.SkillboxError, match="working folder"):
        skillbox.create_skills_provider(skills_dir, cwd=not_a_folder)


# What held in the review, kept so it keeps holding.

ENVIRONMENT_AND_DESCRIPTORS = """import os
print(sorted(os.environ))
for descriptor in sorted(int(name) for name in os.listdir('/proc/self/fd')):
    try:
        print(descriptor, os.read(descriptor, 64))
    except OSError:
        pass
"""


def test_a_script_sees_neither_the_embedding_processs_environment_nor_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_skills(
        tmp_path / "skills",
        {"probe/SKILL.md": PROBE_SKILL, "probe/scripts/look.py": ENVIRONMENT_AND_DESCRIPTORS},
    )
    os.chmod(tmp_path, 0o755)
    monkeypatch.setenv("EMBEDDER_API_KEY", "sk-embedder-secret")
    secret = tmp_path / "secret.txt"
    secret.write_text("embedder-file-secret")
    inherited = os.open(secret, os.O_RDONLY)
    os.set_inheritable(inherited, True)
    try:
        with open(secret) as also_open:
            assert also_open.read()
            answer = skillbox.create_skills_provider(root).handle_tool_call(
                "use_skill", {"skill": "probe", "script": "scripts/look.py"}
            )
    finally:
        os.close(inherited)
    assert answer["success"] is True, answer
    assert "EMBEDDER_API_KEY" not in answer["stdout"], answer["stdout"]
    assert "embedder-file-secret" not in answer["stdout"], answer["stdout"]


async def test_a_cancelled_async_call_ends_its_run(skills_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o777)
    (skills_dir / "probe" / "scripts" / "late.py").write_text(
        "import time\ntime.sleep(2)\nopen('late-marker', 'w').write('x')\n"
    )
    os.chmod(skills_dir / "probe" / "scripts" / "late.py", 0o644)
    skills = skillbox.create_skills_provider(skills_dir, cwd=out, max_runs=1)
    late = asyncio.ensure_future(skills.ahandle_tool_call("use_skill", {"skill": "probe", "script": "scripts/late.py"}))
    await asyncio.sleep(0.7)
    late.cancel()
    with pytest.raises(asyncio.CancelledError):
        await late
    started = time.monotonic()
    answer = await skills.ahandle_tool_call("use_skill", MULTIPLY)
    assert answer["stdout"] == "42\n"
    assert time.monotonic() - started < 1.5, "the cancelled run still held the only run place"
    await asyncio.sleep(2.0)
    assert not (out / "late-marker").exists()
