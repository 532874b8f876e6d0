"""The sandbox holds from Python as it does from the command line: the wheel carries the
helper and the package hands it to skillbox."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

import skillbox


@pytest.fixture
def listener():
    """A TCP server on 127.0.0.1 that accepts connections: what a script must not reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                connection.close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()
    stop.set()
    thread.join()
    server.close()


def probe(skills: skillbox.SkillsProvider, target: Path, address: tuple[str, int]) -> str:
    answer = skills.handle_tool_call(
        "use_skill",
        {"skill": "probe", "script": "scripts/probe.py", "args": [str(target), address[0], str(address[1])]},
    )
    assert answer["success"] is True, answer
    return answer["stdout"]


def test_the_wheel_carries_the_helper() -> None:
    helper = skillbox.sandbox_helper()
    assert helper is not None and os.access(helper, os.X_OK)


def test_no_network_not_root_nothing_written_outside(skills_dir: Path, tmp_path: Path, listener) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(outside, 0o777)
    target = outside / "written.txt"
    stdout = probe(skillbox.create_skills_provider(skills_dir), target, listener)
    assert "uid 0\n" not in stdout, stdout
    assert "no write" in stdout, stdout
    assert "no network" in stdout, stdout
    assert "no shadow" in stdout, stdout
    assert not target.exists()


def test_a_network_grant_opens_the_network(skills_dir: Path, tmp_path: Path, listener) -> None:
    # The same probe with the skill granted the network reaches the listener: the refusal
    # above is the sandbox's, not the probe's.
    skills = skillbox.create_skills_provider(skills_dir, allow_network_for=["probe"])
    assert "\nnetwork\n" in probe(skills, tmp_path / "x", listener)


def test_the_timeout_and_the_output_cap_apply(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir, timeout=1500, max_output=1000)
    started = time.monotonic()
    slow = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/sleep.py", "args": ["30"]})
    assert (slow["success"], slow["errorType"]) == (False, "ExecutionTimeout"), slow
    assert time.monotonic() - started < 10
    loud = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/loud.py"})
    assert loud["stdout"].endswith("[output truncated]")
    assert len(loud["stdout"]) < 1100


def test_paths_stay_in_the_skill(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    for script in ("../outside.py", "/etc/passwd", "scripts/../../outside.py"):
        answer = skills.handle_tool_call("use_skill", {"skill": "probe", "script": script})
        assert answer["errorType"] == "ScriptNotAllowed", (script, answer)
    read = skills.handle_tool_call("read_skill_file", {"skill": "probe", "path": "../outside.py"})
    assert "outside the skill" not in str(read)
    assert "error" in read


def test_a_required_sandbox_without_its_helper_refuses_to_open(skills_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(skillbox.SkillboxError, match="no-helper-here"):
        skillbox.create_skills_provider(skills_dir, sandbox_helper=str(tmp_path / "no-helper-here"))
