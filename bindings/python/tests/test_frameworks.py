"""Real agent frameworks from PyPI drive the provider against a scripted model: the model
loads a skill, runs its script in the sandbox, and answers with the result."""

from __future__ import annotations

import json
import os
from pathlib import Path

import skillbox
from conftest import write_skills


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


def langchain_agent(skills, model):
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="scripted", base_url=model.base_url, api_key="unused", use_responses_api=False)
    return create_agent(chat, tools=skills.langchain_tools(), system_prompt=skills.system_prompt)


def check_the_langchain_run(model, messages) -> None:
    check_the_run(model, messages[-1].content)
    # The model read the answers as text; the tool messages keep them as the provider gave them.
    loaded, ran = [message.artifact for message in messages if message.type == "tool"]
    assert isinstance(loaded, str) and "Run `scripts/multiply.py A B`" in loaded
    assert (ran["success"], ran["stdout"], ran["exitCode"]) == (True, "42\n", 0)


def test_langchain(skills_dir: Path, scripted_model) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    agent = langchain_agent(skills, scripted_model)
    result = agent.invoke({"messages": [{"role": "user", "content": "What is 6 times 7? Use the probe skill."}]})
    check_the_langchain_run(scripted_model, result["messages"])
    assert scripted_model.requests[0]["messages"][0]["content"] == skills.system_prompt
    # The model is offered skillbox's definitions as they are.
    assert scripted_model.requests[0]["tools"] == skills.chat_completions_tools


async def test_langchain_async(skills_dir: Path, scripted_model) -> None:
    skills = skillbox.create_skills_provider(skills_dir)
    agent = langchain_agent(skills, scripted_model)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "What is 6 times 7? Use the probe skill."}]})
    check_the_langchain_run(scripted_model, result["messages"])


def test_langchain_tools_pass_every_argument_on(tmp_path: Path) -> None:
    """Arguments named like those LangChain gives a tool itself reach the tool unchanged."""
    root = tmp_path / "skills"
    write_skills(
        root,
        {
            "settings/SKILL.md": "---\nname: settings\ndescription: Echoes settings.\n---\nCall echo_settings.\n",
            "settings/tools.json": json.dumps(
                [
                    {
                        "name": "echo_settings",
                        "description": "Echo the arguments.",
                        "script": "scripts/echo.py",
                        "parameters": {"config": {"type": "string"}, "run_manager": {"type": "string"}},
                    }
                ]
            ),
            "settings/scripts/echo.py": (
                "import json, sys\n"
                "given = json.load(sys.stdin)\n"
                "print(json.dumps({name: given.get(name) for name in ('config', 'run_manager')}))\n"
            ),
        },
    )
    os.chmod(tmp_path, 0o755)
    skills = skillbox.create_skills_provider(root)
    (echo,) = [tool for tool in skills.langchain_tools() if tool.name == "echo_settings"]
    arguments = {"config": "fast", "run_manager": "mine"}
    message = echo.invoke({"type": "tool_call", "id": "call_1", "name": "echo_settings", "args": arguments})
    assert message.tool_call_id == "call_1"
    assert message.artifact == arguments


def test_langchain_tools_without_langchain_core_name_the_package(skills_dir: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, skillbox\n"
        "sys.modules['langchain_core'] = None\n"
        "try:\n    skillbox.create_skills_provider(sys.argv[1]).langchain_tools()\n"
        "except ImportError as error:\n    print(error)\n"
    )
    said = subprocess.run([sys.executable, "-c", code, str(skills_dir)], capture_output=True, text=True, check=True)
    assert "pip install langchain-core" in said.stdout


def test_import_skillbox_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, skillbox; print(sorted(m for m in ('agents', 'pydantic_ai', 'openai', 'langchain_core') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
