#!/usr/bin/env python3
"""What a Python agent pays for skillbox, side by side in one run (issue 36).

    PYTHON_WITH_SKILLBOX bench/bindings_python.py [--runs 30]

Run it with an interpreter that has the `skillbox` wheel installed (a release build:
`pip install ./bindings/python`). It measures, each as the median of --runs calls after one
warm-up:

  * a sandboxed `use_skill` of a no-op Python script through `handle_tool_call`, against
    `subprocess.run([sys.executable, script])` of the same script (what unsandboxed skill
    libraries do);
  * the same through `await ahandle_tool_call`;
  * a warm `tools.json` handler call (a Python handler; the first call starts its worker);
  * opening a provider over 1,000 generated skills with its prompt and tools ready;
  * `import skillbox`, as a fresh interpreter's start-up with and without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import skillbox

HERE = Path(__file__).resolve().parent


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(call, runs: int) -> float:
    call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return median_ms(samples)


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder, _, names in os.walk(root):
        os.chmod(folder, 0o755)
        for name in names:
            os.chmod(Path(folder) / name, 0o644)


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
            "noop/tools.json": json.dumps(
                [{"name": "noop_tool", "description": "Does nothing.", "script": "scripts/handler.py", "parameters": {}}]
            ),
        },
    )
    skills = skillbox.create_skills_provider(root)
    use = {"skill": "noop", "script": "scripts/noop.py"}
    results = {}
    first = skills.handle_tool_call("use_skill", use)
    assert first.get("success"), first
    results["sandbox"] = first.get("sandbox")
    results["use_skill handle_tool_call"] = timed(lambda: skills.handle_tool_call("use_skill", use), runs)
    script = str(root / "noop" / "scripts" / "noop.py")
    results["subprocess.run of the script"] = timed(lambda: subprocess.run([sys.executable, script], check=True), runs)

    async def awaited() -> None:
        await skills.ahandle_tool_call("use_skill", use)

    results["use_skill ahandle_tool_call"] = timed(lambda: asyncio.run(awaited()), runs)
    handler = skills.handle_tool_call("noop_tool", {})
    results["tools.json handler answer"] = handler
    results["warm tools.json handler call"] = timed(lambda: skills.handle_tool_call("noop_tool", {}), runs)

    many = work / "many"
    subprocess.run([sys.executable, str(HERE / "generate_skills.py"), str(many), "--count", "1000"], check=True, capture_output=True)

    def open_many() -> None:
        provider = skillbox.create_skills_provider(many)
        assert provider.system_prompt and provider.tools

    results["provider over 1,000 skills (prompt and tools)"] = timed(open_many, max(5, runs // 3))
    bare = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 10)
    imported = timed(lambda: subprocess.run([sys.executable, "-c", "import skillbox"], check=True), 10)
    results["python -c pass"] = bare
    results["python -c 'import skillbox'"] = imported
    print(json.dumps({key: round(value, 3) if isinstance(value, float) else value for key, value in results.items()}, indent=2))


if __name__ == "__main__":
    main()
