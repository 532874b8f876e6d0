"""Real agent frameworks from PyPI drive the provider against a scripted model: the model
loads a skill, runs its script in the sandbox, and answers with the result."""

from __future__ import annotations

import json
from pathlib import Path

import skillbox


def tool_results(model) -> list[str]:
    return model.tool_results(model.requests[-1])


def check_the_run(model, output: str) -> None:
    assert output == "The product is 42."
    assert len(model.requests) == 3
    loaded, ran = tool_results(model)
    assert "Run `scripts/multiply.py A B`" in loaded
    ran = json.loads(ran)
    assert (ran["success"], ran["stdout"], ran["exitCode"]) == (True, "42\n", 0)
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert offered[:2] == ["load_skill", "use_skill"]


def test_openai_agents_sdk(skills_dir: Path, scripted_model) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    skills = skillbox.create_skills_provider(skills_dir)
    client = AsyncOpenAI(base_url=scripted_model.base_url, api_key="unused")
    agent = Agent(
        name="assistant",
        instructions=f"You are a helpful assistant.\n\n{skills.system_prompt}",
        tools=skills.openai_agents_tools(),
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
    )
    result = Runner.run_sync(agent, "What is 6 times 7? Use the probe skill.")
    check_the_run(scripted_model, result.final_output)
    assert scripted_model.requests[0]["messages"][0]["content"].endswith(skills.system_prompt)


def test_pydantic_ai(skills_dir: Path, scripted_model) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    skills = skillbox.create_skills_provider(skills_dir)
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=scripted_model.base_url, api_key="unused"))
    agent = Agent(model, instructions=skills.system_prompt, toolsets=[skills.pydantic_ai_toolset()])
    result = agent.run_sync("What is 6 times 7? Use the probe skill.")
    check_the_run(scripted_model, result.output)


def test_import_skillbox_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, skillbox; print(sorted(m for m in ('agents', 'pydantic_ai', 'openai') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
