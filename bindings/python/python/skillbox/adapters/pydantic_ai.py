"""The provider's tools as a pydantic-ai toolset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import SkillsProvider


def function_toolset(provider: SkillsProvider) -> Any:
    """A ``FunctionToolset`` holding one tool per tool offered, with skillbox's JSON schemas
    (skillbox checks the arguments). A call's answer, failures included, goes back to the
    model."""
    try:
        from pydantic_ai import Tool
        from pydantic_ai.toolsets import FunctionToolset
    except ImportError as error:
        raise ImportError(
            "pydantic_ai_toolset() needs pydantic-ai: pip install 'pydantic-ai-slim[openai]'"
        ) from error
    tools = []
    for definition in provider.chat_completions_tools:
        function = definition["function"]
        tools.append(
            Tool.from_schema(
                _caller(provider, function["name"]),
                name=function["name"],
                description=function.get("description", ""),
                json_schema=function["parameters"],
            )
        )
    return FunctionToolset(tools)


def _caller(provider: SkillsProvider, name: str):
    async def call(**arguments: Any) -> Any:
        return await provider.ahandle_tool_call(name, arguments)

    return call
