"""asyncio and threads: calls run at once, and the approval callback is asked first."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import skillbox

SLEEP = {"skill": "probe", "script": "scripts/sleep.py", "args": ["1.5"]}


async def test_concurrent_async_calls_run_concurrently(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir, max_runs=3)
    await skills.ahandle_tool_call("use_skill", SLEEP)  # the first run probes the host
    started = time.monotonic()
    answers = await asyncio.gather(*(skills.ahandle_tool_call("use_skill", SLEEP) for _ in range(3)))
    elapsed = time.monotonic() - started
    assert all(answer["success"] for answer in answers), answers
    assert elapsed < 4.0, f"three 1.5 s runs took {elapsed:.1f} s: they ran one after another"


def test_blocking_calls_release_the_gil(skills_dir: Path) -> None:
    skills = skillbox.create_skills_provider(skills_dir, max_runs=3)
    skills.handle_tool_call("use_skill", SLEEP)
    answers: list[dict] = []
    started = time.monotonic()
    threads = [threading.Thread(target=lambda: answers.append(skills.handle_tool_call("use_skill", SLEEP))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert len(answers) == 3 and all(answer["success"] for answer in answers), answers
    assert elapsed < 4.0, f"three 1.5 s runs on three threads took {elapsed:.1f} s"


def test_on_approval_is_asked_and_a_refusal_is_script_not_allowed(skills_dir: Path) -> None:
    asked: list[dict] = []

    def on_approval(request: dict) -> bool | str:
        asked.append(request)
        return True if request["arguments"].get("args") == ["2", "3"] else "only 2 times 3 today"

    skills = skillbox.create_skills_provider(skills_dir, on_approval=on_approval)
    allowed = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["2", "3"]})
    assert allowed["stdout"] == "6\n"
    refused = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["4", "5"]})
    assert refused["errorType"] == "ScriptNotAllowed"
    assert "only 2 times 3 today" in refused["error"]
    assert [(r["tool"], r["skill"]) for r in asked] == [("use_skill", "probe")] * 2
    # Reading instructions runs nothing: nobody is asked.
    skills.handle_tool_call("load_skill", {"skill": "probe"})
    assert len(asked) == 2


def test_an_approval_callback_that_raises_refuses(skills_dir: Path) -> None:
    def on_approval(_request: dict) -> bool:
        raise RuntimeError("the reviewer is out")

    skills = skillbox.create_skills_provider(skills_dir, on_approval=on_approval)
    answer = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["1", "1"]})
    assert answer["errorType"] == "ScriptNotAllowed"
    assert "the reviewer is out" in answer["error"]


async def test_an_async_approval_callback_is_awaited(skills_dir: Path) -> None:
    async def on_approval(request: dict) -> bool:
        await asyncio.sleep(0.01)
        return request["arguments"]["args"] == ["7", "6"]

    skills = skillbox.create_skills_provider(skills_dir, on_approval=on_approval)
    allowed = await skills.ahandle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["7", "6"]})
    assert allowed["stdout"] == "42\n"
    refused = await skills.ahandle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["1", "2"]})
    assert refused["errorType"] == "ScriptNotAllowed"
    # A blocking call from inside the running loop cannot await it, and says what to do.
    blocked = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["7", "6"]})
    assert blocked["errorType"] == "ScriptNotAllowed"
    assert "call ahandle_tool_call from async code" in blocked["error"]


def test_a_blocking_call_runs_an_async_approval_callback(skills_dir: Path) -> None:
    async def on_approval(request: dict) -> bool:
        await asyncio.sleep(0.01)
        return request["arguments"]["args"] == ["7", "6"]

    skills = skillbox.create_skills_provider(skills_dir, on_approval=on_approval)
    allowed = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["7", "6"]})
    assert allowed["stdout"] == "42\n"
    refused = skills.handle_tool_call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["6", "7"]})
    assert refused["errorType"] == "ScriptNotAllowed"
