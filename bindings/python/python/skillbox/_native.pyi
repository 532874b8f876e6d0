"""Types of the extension module (``bindings/python/src``)."""

from typing import Any, Awaitable, Callable

class SkillboxError(Exception): ...

class Provider:
    @property
    def system_prompt(self) -> str: ...
    @property
    def skill_names(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...
    def tools_for(self, format: str) -> Any: ...
    def handle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Any: ...
    def ahandle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Awaitable[Any]: ...
    def session(self, enforce_allowed_tools: bool = False) -> Session: ...

class Session:
    @property
    def active_skill(self) -> str | None: ...
    @property
    def model_override(self) -> str | None: ...
    @property
    def allowed_tools(self) -> list[str] | None: ...
    def tools_for(self, format: str) -> Any: ...
    def handle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Any: ...
    def ahandle_tool_call(self, name: str, args: dict[str, Any] | str | None = None) -> Awaitable[Any]: ...

def open(
    skills_dir: str | list[str],
    *,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    timeout: int = 30000,
    max_output: int = 20480,
    cwd: str | None = None,
    sandbox: str = "best-effort",
    sandbox_helper: str | None = None,
    allow_network: bool = False,
    allow_network_for: list[str] | None = None,
    secrets: dict[str, Any] | None = None,
    pass_env: list[str] | None = None,
    on_approval: Callable[[dict[str, Any]], Any] | None = None,
    trust: str = "roots",
    find_skills: str = "auto",
    max_prompt_chars: int | None = None,
    audit_log: str | None = None,
    runtime_dir: str | None = None,
    max_runs: int | None = None,
) -> Provider: ...
