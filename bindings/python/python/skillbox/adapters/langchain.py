"""The provider's tools as LangChain ``StructuredTool``s (``langchain-core``)."""

from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any

from . import answer_text

if TYPE_CHECKING:
    from .. import SkillsProvider


def structured_tools(provider: SkillsProvider) -> list[Any]:
    """One ``StructuredTool`` per tool offered, with skillbox's JSON schema as its
    ``args_schema`` (skillbox checks the arguments), callable sync (``invoke``) and async
    (``ainvoke``). The model reads a call's answer as text, failures included, so it can
    recover; the answer as the provider gave it (a str, or the ``use_skill`` dict) is the
    ``ToolMessage``'s ``artifact``."""
    tool_class = _tool_class()
    tools = []
    for definition in provider.chat_completions_tools:
        function = definition["function"]
        name = function["name"]
        tools.append(
            tool_class(
                name=name,
                description=function.get("description", ""),
                args_schema=copy.deepcopy(function["parameters"]),
                func=_caller(provider, name),
                coroutine=_async_caller(provider, name),
                response_format="content_and_artifact",
            )
        )
    return tools


@functools.cache
def _tool_class() -> type:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError as error:
        raise ImportError("langchain_tools() needs langchain-core: pip install langchain-core") from error

    class SkillboxTool(StructuredTool):
        """A ``StructuredTool`` whose function gets the model's arguments as one dict, so an
        argument named like one LangChain passes to a tool itself (``config``,
        ``run_manager``) reaches skillbox instead of being replaced by it."""

        def _to_args_and_kwargs(self, tool_input: Any, tool_call_id: str | None) -> tuple[tuple, dict]:
            args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
            return args, {"arguments": kwargs}

    return SkillboxTool


def _content_and_artifact(answer: Any) -> tuple[str, Any]:
    return answer_text(answer), answer


def _caller(provider: SkillsProvider, name: str):
    def call(arguments: dict[str, Any]) -> tuple[str, Any]:
        return _content_and_artifact(provider.handle_tool_call(name, arguments))

    return call


def _async_caller(provider: SkillsProvider, name: str):
    async def call(arguments: dict[str, Any]) -> tuple[str, Any]:
        return _content_and_artifact(await provider.ahandle_tool_call(name, arguments))

    return call
