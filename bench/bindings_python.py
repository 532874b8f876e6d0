#!/usr/bin/env python3
"""What a Python agent pays for skillbox, side by side in one run (issue 36).

    PYTHON_WITH_SKILLBOX bench/bindings_python.py [--runs 30]

Run it with an interpreter that has the `skillbox` wheel installed (a release build:
`pip install ./bindings/python`) and, for the comparison with pydantic-ai-skills,
`pydantic-ai-skills==1.4.0` (the last release with `SkillsToolset`; without it that row is
skipped). It measures, each as the median of --runs calls after warm-up, with the calls
compared alternating round by round so both see the same machine (and for the script runs the
CPU time per call, this process's and its children's, which a loaded machine inflates less):

  * a sandboxed `use_skill` of a no-op Python script through `handle_tool_call`, against
    `subprocess.run` of the same script, unsandboxed, with the interpreter skillbox runs
    (`skillbox doctor --json`) and with `sys.executable` (what pydantic-ai-skills'
    `LocalSkillScriptExecutor` runs);
  * the same `use_skill` through `await ahandle_tool_call`;
  * a warm `tools.json` handler call, a Python and a JavaScript handler (the first call starts
    the worker);
  * opening a provider over 1,000 generated skills with its prompt and tools ready, against
    pydantic-ai-skills' `SkillsToolset` over the same folder with its instructions and tool
    definitions ready;
  * `import skillbox` (and `import pydantic_ai_skills`), as a fresh interpreter's start-up.

Every child process runs with PATH alone in its environment, as skillbox's scripts do.

Prints a markdown table and then the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import skillbox

HERE = Path(__file__).resolve().parent
# Every child here gets the environment skillbox gives the scripts it runs, PATH alone, so a
# variable of this shell cannot slow the unsandboxed side only.
CHILD_ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
PYDANTIC_AI_SKILLS = "pydantic-ai-skills"


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its children waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def interleaved(calls: dict[str, Callable[[], object]], runs: int, warmup: int = 2, cpu: dict[str, float] | None = None) -> dict[str, float]:
    """Median milliseconds of each call; the calls alternate, in reversed order every other round.
    With `cpu`, also the mean CPU milliseconds per call (this process and its children) into it."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    cpu_used = dict.fromkeys(calls, 0.0)
    for round_number in range(warmup + runs):
        names = list(calls) if round_number % 2 == 0 else list(reversed(calls))
        for name in names:
            cpu_before = cpu_seconds()
            started = time.perf_counter()
            calls[name]()
            if round_number >= warmup:
                samples[name].append(time.perf_counter() - started)
                cpu_used[name] += cpu_seconds() - cpu_before
    if cpu is not None:
        cpu.update({f"{name}, CPU": used / runs * 1000 for name, used in cpu_used.items()})
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # The sandbox runs scripts as another uid: everything readable by all.
    for folder, _, names in os.walk(root):
        os.chmod(folder, 0o755)
        for name in names:
            os.chmod(Path(folder) / name, 0o644)


def chosen_python(root: Path) -> str:
    """The python3 that skillbox runs scripts with, from the wheel's own `skillbox` command."""
    command = Path(sys.executable).parent / "skillbox"
    report = json.loads(subprocess.run([str(command), "--root", str(root), "doctor", "--json"], check=True, capture_output=True).stdout)
    return next(entry["program"] for entry in report["interpreters"] if entry["language"] == "python" and entry["chosen"])


def pydantic_ai_skills_opener(folder: Path) -> tuple[str, Callable[[], tuple[int, int]]] | None:
    """Open pydantic-ai-skills' SkillsToolset over folder as an agent would before its first
    request: construct it, then get its instructions and tool definitions."""
    try:
        from importlib.metadata import version

        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage
        from pydantic_ai_skills import SkillsToolset
    except ImportError:
        return None
    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def ready() -> tuple[int, int]:
        toolset = SkillsToolset(directories=[folder])
        instructions = await toolset.get_instructions(context)
        tools = await toolset.get_tools(context)
        assert instructions and tools
        return len(toolset.skills), len(tools)

    return version(PYDANTIC_AI_SKILLS), lambda: asyncio.run(ready())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="skillbox-bench-"))
    os.chmod(work, 0o755)
    root = work / "skills"
    write(
        root,
        {
            "noop/SKILL.md": "---\nname: noop\ndescription: Does nothing.\n---\nRun scripts/noop.py.\n",
            "noop/scripts/noop.py": "pass\n",
            "noop/scripts/handler.py": "def handler(arguments):\n    return {'ok': True}\n",
            "noop/scripts/handler.mjs": "export default async function (args) {\n  return { ok: true }\n}\n",
            "noop/tools.json": json.dumps(
                [
                    {"name": "noop_tool", "description": "Does nothing.", "script": "scripts/handler.py", "parameters": {}},
                    {"name": "noop_js_tool", "description": "Does nothing.", "script": "scripts/handler.mjs", "parameters": {}},
                ]
            ),
        },
    )
    python = chosen_python(root)
    skills = skillbox.create_skills_provider(root)
    use = {"skill": "noop", "script": "scripts/noop.py"}
    results: dict[str, object] = {"python": sys.version.split()[0], "sys.executable": sys.executable, "interpreter skillbox runs": python}
    first = skills.handle_tool_call("use_skill", use)
    assert first.get("success"), first
    results["sandbox"] = first.get("sandbox")

    def use_skill() -> None:
        answer = skills.handle_tool_call("use_skill", use)
        assert answer.get("success"), answer

    async def awaited() -> None:
        answer = await skills.ahandle_tool_call("use_skill", use)
        assert answer.get("success"), answer

    script = str(root / "noop" / "scripts" / "noop.py")
    runs_of_script = interleaved(
        {
            "use_skill handle_tool_call": use_skill,
            "use_skill ahandle_tool_call": lambda: asyncio.run(awaited()),
            "subprocess.run, the same interpreter": lambda: subprocess.run([python, script], check=True, env=CHILD_ENVIRONMENT),
            "subprocess.run, sys.executable": lambda: subprocess.run([sys.executable, script], check=True, env=CHILD_ENVIRONMENT),
        },
        runs,
        cpu=results,
    )
    results.update(runs_of_script)
    results["tools.json handler answers"] = [skills.handle_tool_call(tool, {}) for tool in ("noop_tool", "noop_js_tool")]
    results.update(
        interleaved(
            {
                "warm tools.json handler call": lambda: skills.handle_tool_call("noop_tool", {}),
                "warm tools.json handler call, JavaScript": lambda: skills.handle_tool_call("noop_js_tool", {}),
            },
            max(runs, 100),
            3,
        )
    )

    many = work / "many"
    subprocess.run([sys.executable, str(HERE / "generate_skills.py"), str(many), "--count", "1000"], check=True, capture_output=True)
    counts: dict[str, tuple[int, int]] = {}

    def open_many() -> None:
        provider = skillbox.create_skills_provider(many)
        prompt, tools = provider.system_prompt, provider.tools
        assert prompt and tools
        counts["skillbox"] = (len(provider.skill_names), len(tools))

    openers: dict[str, Callable[[], object]] = {"skillbox provider over 1,000 skills": open_many}
    peer = pydantic_ai_skills_opener(many)
    if peer is not None:
        peer_version, peer_open = peer
        results[PYDANTIC_AI_SKILLS] = peer_version

        def open_peer() -> None:
            counts[PYDANTIC_AI_SKILLS] = peer_open()

        openers["SkillsToolset over 1,000 skills"] = open_peer
    # pydantic-ai-skills warns once per invalid skill (2% of the tree); not printing them is the
    # cheaper path for it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results.update(interleaved(openers, max(5, runs // 3), 1))
    results["skills, tools seen"] = counts

    start_ups = {"python -c pass": "pass", "python -c 'import skillbox'": "import skillbox"}
    if peer is not None:
        start_ups["python -c 'import pydantic_ai_skills'"] = "import pydantic_ai_skills"
    results.update(interleaved({name: (lambda code=code: subprocess.run([sys.executable, "-c", code], check=True, env=CHILD_ENVIRONMENT)) for name, code in start_ups.items()}, 10, 1))
    print_table(results, runs)
    print(json.dumps({key: round(value, 3) if isinstance(value, float) else value for key, value in results.items()}))


def print_table(results: dict[str, object], runs: int) -> None:
    def ms(key: str) -> str:
        value = results[key]
        assert isinstance(value, float)
        return f"{value:.3f} ms" if value < 1 else f"{value:.2f} ms"

    def ratio(slow: str, fast: str) -> str:
        slow_value, fast_value = results[slow], results[fast]
        assert isinstance(slow_value, float) and isinstance(fast_value, float)
        return f"{slow_value / fast_value:.2f}x"

    counts = results["skills, tools seen"]
    assert isinstance(counts, dict)
    rows = [
        ("`use_skill` of a no-op Python script, `handle_tool_call`, sandboxed", ms("use_skill handle_tool_call")),
        ("its CPU per call (this process and its children)", ms("use_skill handle_tool_call, CPU")),
        ("the same through `ahandle_tool_call` (each in a fresh `asyncio.run`)", ms("use_skill ahandle_tool_call")),
        (f"`subprocess.run([{results['interpreter skillbox runs']}, script])`, no sandbox", ms("subprocess.run, the same interpreter")),
        ("its CPU per call", ms("subprocess.run, the same interpreter, CPU")),
        ("ratio, the same interpreter (CPU)", ratio("use_skill handle_tool_call", "subprocess.run, the same interpreter") + " (" + ratio("use_skill handle_tool_call, CPU", "subprocess.run, the same interpreter, CPU") + ")"),
        ("`subprocess.run([sys.executable, script])`, no sandbox", ms("subprocess.run, sys.executable")),
        ("ratio, `sys.executable`", ratio("use_skill handle_tool_call", "subprocess.run, sys.executable")),
        ("a warm `tools.json` handler call, Python handler", ms("warm tools.json handler call")),
        ("a warm `tools.json` handler call, JavaScript handler", ms("warm tools.json handler call, JavaScript")),
        ("a skillbox provider over 1,000 skills, prompt and tools ready (skills, tools: {}, {})".format(*counts["skillbox"]), ms("skillbox provider over 1,000 skills")),
    ]
    if PYDANTIC_AI_SKILLS in counts:
        rows += [
            (
                "pydantic-ai-skills {} `SkillsToolset`, instructions and tools ready (skills, tools: {}, {})".format(
                    results[PYDANTIC_AI_SKILLS], *counts[PYDANTIC_AI_SKILLS]
                ),
                ms("SkillsToolset over 1,000 skills"),
            ),
            ("ratio, SkillsToolset / skillbox", ratio("SkillsToolset over 1,000 skills", "skillbox provider over 1,000 skills")),
        ]
    rows += [(f"`{key}`", ms(key)) for key in results if key.startswith("python -c")]
    print(f"python {results['python']}, sandbox {results['sandbox']}, median of {runs} calls\n")
    print("| measure | median |\n| --- | ---: |")
    for what, value in rows:
        print(f"| {what} | {value} |")


if __name__ == "__main__":
    main()
