"""skillbox for Python agents: point a provider at folders of Agent Skills, put its
``system_prompt`` and ``tools`` in front of a model, and answer the model's tool calls with
``handle_tool_call`` (or ``await ahandle_tool_call``). Scripts run in skillbox's sandbox, through
the same door policy (approval, run queue, trust, audit log) as every other way into skillbox.

    import skillbox

    skills = skillbox.create_skills_provider("./skills", timeout=10_000)
    system = f"You are a helpful assistant.\\n\\n{skills.system_prompt}"
    answer = skills.handle_tool_call("use_skill", {"skill": "pdf", "script": "fill.py"})
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Union

from . import _native
from ._native import Session, SkillboxError

__all__ = [
    "SkillboxError",
    "Session",
    "SkillsProvider",
    "TOOL_FORMATS",
    "create_skills_provider",
    "sandbox_helper",
]

#: The formats ``tools_for`` renders: the Responses API's flat tools (seed 002's), Chat
#: Completions' ``{"type": "function", "function": ...}``, Anthropic Messages, Gemini, MCP.
TOOL_FORMATS = ("responses", "openai", "anthropic", "gemini", "mcp")

_BIN = Path(__file__).resolve().parent / "_bin"

PathLike = Union[str, "os.PathLike[str]"]


def sandbox_helper() -> Path | None:
    """The ``skillbox-sandbox`` helper this installation carries, when it carries one."""
    helper = _BIN / "skillbox-sandbox"
    return helper if helper.is_file() else None


def create_skills_provider(
    skills_dir: PathLike | Iterable[PathLike],
    *,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    timeout: int = 30000,
    max_output: int = 20480,
    cwd: PathLike | None = None,
    **more: Any,
) -> "SkillsProvider":
    """Open ``skills_dir`` (a folder of skills, or a list of them, lowest precedence first).

    ``include``/``exclude`` filter skills by name (globs); ``timeout`` is a script's limit in
    milliseconds and ``max_output`` the bytes kept of each output stream, as in seed 002;
    ``cwd`` is every run's working folder (by default each run gets a fresh private one).

    More keywords, as the command line offers them: ``sandbox`` (``"best-effort"``,
    ``"required"``, ``"off"``), ``allow_network`` (bool), ``allow_network_for`` (skill names),
    ``secrets`` (``{"NAME": "value"}``, or ``{"NAME": {"value": ..., "skills": [...]}}``),
    ``pass_env`` (variable names), ``on_approval`` (a callable, or coroutine function, given
    the request as a dict and answering ``True`` to run it, ``False`` or a reason to refuse),
    ``trust`` (``"roots"``, the command line's rule, or ``"all"``), ``find_skills``
    (``"auto"``, ``"always"``, ``"never"``), ``max_prompt_chars``, ``audit_log``,
    ``runtime_dir``, ``max_runs`` and ``sandbox_helper`` (by default the one this package
    carries).

    Raises ``SkillboxError`` when the roots cannot be opened (a missing folder, a sandbox the
    host cannot give), ``ValueError`` for an option's bad value and ``TypeError`` for an
    unknown option.
    """
    if isinstance(skills_dir, (str, os.PathLike)):
        roots: Any = os.fspath(skills_dir)
    else:
        roots = [os.fspath(root) for root in skills_dir]
    if more.get("sandbox_helper") is None:
        helper = sandbox_helper()
        more["sandbox_helper"] = None if helper is None else str(helper)
    if cwd is not None:
        cwd = os.fspath(cwd)
    native = _native.open(
        roots,
        include=include,
        exclude=exclude,
        timeout=timeout,
        max_output=max_output,
        cwd=cwd,
        **more,
    )
    return SkillsProvider(native)


class SkillsProvider:
    """Skills opened for a model: seed 002's ``systemPrompt``, ``tools``, ``skillNames`` and
    ``handleToolCall`` with Python's names, and adapters for agent frameworks."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.Provider) -> None:
        self._native = native

    @property
    def system_prompt(self) -> str:
        """The system-prompt section listing the skills."""
        return self._native.system_prompt

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions in the Responses API's format (seed 002's)."""
        return self._native.tools_for("responses")

    @property
    def chat_completions_tools(self) -> list[dict[str, Any]]:
        """The tool definitions in the Chat Completions format."""
        return self._native.tools_for("openai")

    @property
    def skill_names(self) -> list[str]:
        """The names of the skills a model may see, sorted."""
        return self._native.skill_names

    @property
    def warnings(self) -> list[str]:
        """What was found wrong while opening (tools another skill owns the name of)."""
        return self._native.warnings

    def tools_for(self, format: str) -> Any:
        """The tool definitions in ``format``, one of ``TOOL_FORMATS``."""
        return self._native.tools_for(format)

    def handle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Any:
        """Answer a model's tool call: ``load_skill`` the instructions (a str), ``use_skill``
        ``{success, stdout, stderr, exitCode, error, errorType}``, every other tool what it
        answers. ``args`` is a dict, or the model's argument text as it came. Failures are
        answers too, for the model to read; nothing here raises for them. Blocks this thread
        only: other threads run meanwhile."""
        return self._native.handle_tool_call(name, args)

    async def ahandle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Any:
        """``handle_tool_call`` for asyncio: calls run concurrently."""
        return await self._native.ahandle_tool_call(name, args)

    def session(self, enforce_allowed_tools: bool = False) -> Session:
        """A conversation: its active skill, that skill's ``allowed-tools`` (refused outside
        them when ``enforce_allowed_tools``) and ``model`` override, and the MCP servers its
        loaded skills start, whose tools it then offers and answers."""
        return self._native.session(enforce_allowed_tools)

    def openai_agents_tools(self) -> list[Any]:
        """The tools as the OpenAI Agents SDK's ``FunctionTool``s (needs ``openai-agents``)."""
        from .adapters.openai_agents import function_tools

        return function_tools(self)

    def pydantic_ai_toolset(self) -> Any:
        """The tools as a pydantic-ai ``FunctionToolset`` (needs ``pydantic-ai``)."""
        from .adapters.pydantic_ai import function_toolset

        return function_toolset(self)

    def langchain_tools(self) -> list[Any]:
        """The tools as LangChain ``StructuredTool``s (needs ``langchain-core``), for
        ``langchain.agents.create_agent`` or any LangChain model's ``bind_tools``. The model
        reads each answer as text; the ``ToolMessage``'s ``artifact`` holds it as answered."""
        from .adapters.langchain import structured_tools

        return structured_tools(self)

    def __repr__(self) -> str:
        return f"SkillsProvider(skills={self.skill_names!r})"
