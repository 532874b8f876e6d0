"""The provider's tools as the OpenAI Agents SDK's ``FunctionTool``s."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import answer_text

if TYPE_CHECKING:
    from .. import SkillsProvider


def function_tools(provider: SkillsProvider) -> list[Any]:
    """One ``FunctionTool`` per tool offered. Schemas are passed as written, not made strict
    (strict mode would make ``use_skill``'s optional ``args`` required); a call's answer goes
    back to the model as text, failures included, so it can recover."""
    try:
        from agents import FunctionTool
    except ImportError as error:
        raise ImportError(
            "openai_agents_tools() needs the OpenAI Agents SDK: pip install openai-agents"
        ) from error
    tools = []
    for definition in provider.chat_completions_tools:
        function = definition["function"]
        tools.append(
            FunctionTool(
                name=function["name"],
                description=function.get("description", ""),
                params_json_schema=copy.deepcopy(function["parameters"]),
                on_invoke_tool=_invoker(provider, function["name"]),
                strict_json_schema=False,
            )
        )
    return tools


def _invoker(provider: SkillsProvider, name: str):
    async def invoke(_context: Any, arguments: str) -> str:
        # The model's argument text goes as it came: skillbox decodes it, and answers text
        # that is not a JSON object with the message every door gives.
        answer = await provider.ahandle_tool_call(name, arguments or None)
        return answer_text(answer)

    return invoke
