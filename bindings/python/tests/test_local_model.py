"""A real model drives the provider: pydantic-ai with Qwen2.5-Coder-1.5B-Instruct on
llama-server (the ``local_model`` fixture) loads a skill and runs its script in the sandbox.
The model's wording is not checked, only the structure: which tools ran, that the script's
output reached the model, and that the run ended with an answer within its rounds. Skipped
with a note when the model cannot be provisioned, unless ``SKILLBOX_REQUIRE_LOCAL_MODEL`` is
set (CI)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import skillbox
from conftest import write_skills

GREETING_SKILL = """---
name: greeting
description: Writes a personal greeting for someone. Use when asked to greet a person.
---
Run the script greet.py with use_skill, passing the person's name as the only argument: {"skill": "greeting", "script": "greet.py", "args": ["NAME"]}. Then answer with the greeting it printed.
"""

# Bounds: requests to the model (rounds), tokens per answer, seconds per request and per run.
ROUNDS = 6
MAX_TOKENS = 256
REQUEST_SECONDS = 300
RUN_SECONDS = 900


async def test_a_local_model_loads_a_skill_and_runs_its_script(tmp_path: Path, local_model) -> None:
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.settings import ModelSettings

    # A marker no model can guess: it reaches the model only if the script ran.
    marker = uuid.uuid4().hex[:12]
    os.chmod(tmp_path, 0o755)
    root = write_skills(
        tmp_path / "skills",
        {
            "greeting/SKILL.md": GREETING_SKILL,
            "greeting/scripts/greet.py": (
                f"import sys\nprint('Greetings, ' + ' '.join(sys.argv[1:]) + '! (ticket {marker})')\n"
            ),
        },
    )
    skills = skillbox.create_skills_provider(root)
    model = OpenAIChatModel("local", provider=OpenAIProvider(base_url=local_model.base_url, api_key="unused"))
    agent = Agent(
        model,
        instructions=f"You are a helpful assistant.\n\n{skills.system_prompt}",
        toolsets=[skills.pydantic_ai_toolset()],
        model_settings=ModelSettings(temperature=0, max_tokens=MAX_TOKENS, timeout=REQUEST_SECONDS),
        retries=2,
    )
    # Told only to use a skill, a 1.5B model calls the skill's name as a tool, or loads it and
    # then writes a greeting itself; told which script to run with which arguments, it runs it.
    prompt = (
        "Load the greeting skill with load_skill. Then run its script greet.py with use_skill, "
        'with the args ["Ada Lovelace"], and answer with what it printed.'
    )
    run = await asyncio.wait_for(agent.run(prompt, usage_limits=UsageLimits(request_limit=ROUNDS)), RUN_SECONDS)

    parts = [part for message in run.all_messages() for part in message.parts]
    called = [part.tool_name for part in parts if isinstance(part, ToolCallPart)]
    returned = [part for part in parts if isinstance(part, ToolReturnPart)]
    loaded = [part.content for part in returned if part.tool_name == "load_skill"]
    ran = [part.content for part in returned if part.tool_name == "use_skill"]
    assert "load_skill" in called and "use_skill" in called, run.all_messages()
    assert called.index("load_skill") < called.index("use_skill"), called
    assert any("greet.py" in text for text in loaded), loaded
    assert any(
        result["success"] and result["exitCode"] == 0 and f"(ticket {marker})" in result["stdout"] for result in ran
    ), ran
    assert isinstance(run.output, str) and run.output.strip(), run.output
