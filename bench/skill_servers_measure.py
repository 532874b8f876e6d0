#!/usr/bin/env python3
"""Measurement for bench/skill_servers.sh: a skill's MCP server started by `load_skill` (issue 27)
against the same server started and called directly, through one MCP client.

Runs in the test venv (the `mcp` package, 2.3.0). The skill `weather` ships a Python SDK server
(`server.py`, its packages in `vendor/`) declared in `.mcp.json`; `plain` declares none. In one run:

  measure   cold starts (a new `skillbox mcp` per sample: `load_skill` until the server's tool is
            callable) beside `python3 server.py` spawned by the SDK client; warm loads (`skillbox
            serve`, two sessions over /mcp: B loads what A holds); tool calls through skillbox
            against the same calls made to the server directly; hyperfine of one-shot clients;
            after each part, that no server process is left. Prints a markdown table and writes
            bench/out/skill-servers-results.{md,json}
  oneshot   what hyperfine times: `skillbox` (spawn `skillbox mcp`, initialize, load_skill, one
            call, exit), `direct` (spawn the server, initialize, one call, exit) or `imports`
            (the client's interpreter and imports, no server)

Timed work alternates between skillbox and the direct server sample by sample, so both see the
same machine noise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import children, process_tree, start_serve  # noqa: E402

SKILL = "weather"
PLAIN = "plain"
TOOL = "weather__forecast"
SERVER_TOOL = "forecast"
CITY = "Oslo"
ANSWER = f"Sunny in {CITY}, 21 degrees."
RUNNING = f"`weather` (skill `{SKILL}`) is running; its tools: `{TOOL}`"
WARMUP_CALLS = 20
HYPERFINE_WARMUP = 3
HYPERFINE_BATCHES = 4
GONE_TIMEOUT = 15.0
# The environment every server and skillbox runs with: a private HOME (no skills from the
# user's folders) and a PATH whose python3 is the system one, the interpreter the sandbox runs.
PATH = "/usr/local/bin:/usr/bin:/bin"

SERVER_PY = '''import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")

@server.tool()
def forecast(city: str) -> str:
    """The forecast for a city."""
    return f"Sunny in {city}, 21 degrees."

server.run("stdio")
'''


def log(message: str) -> None:
    print(f"skill-servers-bench: {message}", file=sys.stderr, flush=True)


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 3)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


# --- processes ---------------------------------------------------------------------------------


def with_marker(marker: str) -> list[int]:
    """Processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in line:
            found.append(int(entry.name))
    return sorted(found)


def python_with_marker(marker: str) -> list[int]:
    """The server interpreters among `with_marker` (not a sandbox helper that carries the
    command line as its arguments)."""
    found = []
    for pid in with_marker(marker):
        try:
            first = (Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") or [b""])[0]
        except OSError:
            continue
        if b"python" in Path(first.decode(errors="replace")).name.encode():
            found.append(pid)
    return found


def wait_gone(marker: str, timeout: float = GONE_TIMEOUT) -> float | None:
    """Seconds until no process holds `marker`, or None when some still do after `timeout`."""
    started = time.perf_counter()
    while with_marker(marker):
        if time.perf_counter() - started > timeout:
            return None
        time.sleep(0.005)
    return time.perf_counter() - started


def cpu_ns(pids: list[int]) -> int:
    """CPU time so far of every thread of `pids`, in nanoseconds (schedstat)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def describe_process(pid: int) -> str:
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        exe = "?"
    uid = status_field(pid, "Uid") or "?"
    parent = status_field(pid, "PPid")
    try:
        started_by = os.readlink(f"/proc/{parent}/exe") if parent else "?"
    except OSError:
        started_by = "?"
    return f"{exe} (uid {uid}, started by {started_by})"


def status_field(pid: int, field: str) -> str | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return line.split()[1]
    except OSError:
        pass
    return None


# --- the skills --------------------------------------------------------------------------------


def make_root(work: Path, vendor: Path, marker: str) -> Path:
    root = work / "root"
    weather = root / SKILL
    plain = root / PLAIN
    weather.mkdir(parents=True)
    plain.mkdir(parents=True)
    (weather / "SKILL.md").write_text(
        "---\nname: weather\ndescription: Weather forecasts. Use when the user asks about the"
        " weather.\n---\nCall `weather__forecast` with the city.\n"
    )
    (weather / "server.py").write_text(SERVER_PY)
    # The marker is an argument the server ignores: it names this run's processes in /proc.
    (weather / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"weather": {"command": "python3", "args": ["server.py", marker]}}}
    ))
    (plain / "SKILL.md").write_text(
        "---\nname: plain\ndescription: A skill without servers. Use when measuring.\n---\n"
        "Nothing to start.\n"
    )
    linked = subprocess.run(["cp", "-al", str(vendor), str(weather / "vendor")])
    if linked.returncode != 0:
        shutil.rmtree(weather / "vendor", ignore_errors=True)
        subprocess.run(["cp", "-r", str(vendor), str(weather / "vendor")], check=True)
    # The sandbox runs the server as another uid: the tree must be readable by everyone.
    subprocess.run(["chmod", "-R", "o+rX", str(work)], check=True)
    return root


class Setup:
    def __init__(self, arguments: argparse.Namespace, work: Path, root: Path, marker: str):
        self.skillbox = str(arguments.skillbox)
        self.python = str(arguments.python)
        self.work = work
        self.root = root
        self.marker = marker
        self.home = work / "home"
        self.data = work / "serve-data"
        self.environment = {"HOME": str(self.home), "PATH": PATH}

    def skillbox_parameters(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=self.skillbox, args=["mcp", "--root", str(self.root)],
            env=self.environment, cwd=str(self.work),
        )

    def direct_parameters(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=self.python, args=["server.py", self.marker],
            env=self.environment, cwd=str(self.root / SKILL),
        )


def text_of(result: Any) -> str:
    return result.content[0].text if result.content else ""


def check_loaded(result: Any, where: str) -> None:
    text = text_of(result)
    if result.is_error or RUNNING not in text:
        raise SystemExit(f"{where}: load_skill did not start the server:\n{text}")


def check_answer(result: Any, where: str) -> None:
    if result.is_error or text_of(result) != ANSWER:
        raise SystemExit(f"{where}: unexpected tool answer: {result}")


async def list_has(session: ClientSession, name: str, where: str) -> None:
    names = [tool.name for tool in (await session.list_tools()).tools]
    if name not in names:
        raise SystemExit(f"{where}: {name} not in {names}")


# --- 1. cold starts ----------------------------------------------------------------------------


async def cold_skillbox(setup: Setup, errlog: Any, samples: dict[str, list[float]]) -> None:
    started = time.perf_counter()
    async with stdio_client(setup.skillbox_parameters(), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            loaded = await session.call_tool("load_skill", {"skill": SKILL})
            load_done = time.perf_counter()
            check_loaded(loaded, "cold skillbox")
            await list_has(session, TOOL, "cold skillbox")
            listed = time.perf_counter()
            answer = await session.call_tool(TOOL, {"city": CITY})
            called = time.perf_counter()
            check_answer(answer, "cold skillbox")
            plain_started = time.perf_counter()
            plain = await session.call_tool("load_skill", {"skill": PLAIN})
            plain_done = time.perf_counter()
            if plain.is_error:
                raise SystemExit(f"load_skill of {PLAIN} failed: {text_of(plain)}")
            closing = time.perf_counter()
    closed = time.perf_counter()
    gone = wait_gone(setup.marker)
    if gone is None:
        raise SystemExit(f"cold skillbox: a server process outlived its session: "
                         f"{with_marker(setup.marker)}")
    samples["spawn_initialize"].append(initialized - started)
    samples["load_skill"].append(load_done - initialized)
    samples["tools_list"].append(listed - load_done)
    samples["first_call"].append(called - listed)
    samples["spawn_to_listed"].append(listed - started)
    samples["spawn_to_answer"].append(called - started)
    samples["load_to_answer"].append(called - initialized)
    samples["load_plain"].append(plain_done - plain_started)
    samples["close"].append(closed - closing)
    samples["close_to_gone"].append(closed - closing + gone)


async def cold_direct(setup: Setup, errlog: Any, samples: dict[str, list[float]]) -> None:
    started = time.perf_counter()
    async with stdio_client(setup.direct_parameters(), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            await list_has(session, SERVER_TOOL, "cold direct")
            listed = time.perf_counter()
            answer = await session.call_tool(SERVER_TOOL, {"city": CITY})
            called = time.perf_counter()
            check_answer(answer, "cold direct")
            closing = time.perf_counter()
    closed = time.perf_counter()
    if wait_gone(setup.marker) is None:
        raise SystemExit("cold direct: the server outlived its client")
    samples["spawn_initialize"].append(initialized - started)
    samples["tools_list"].append(listed - initialized)
    samples["first_call"].append(called - listed)
    samples["spawn_to_listed"].append(listed - started)
    samples["spawn_to_answer"].append(called - started)
    samples["close"].append(closed - closing)


async def cold(setup: Setup, errlog: Any, runs: int) -> dict[str, dict[str, list[float]]]:
    names = ("spawn_initialize", "load_skill", "tools_list", "first_call", "spawn_to_listed",
             "spawn_to_answer", "load_to_answer", "load_plain", "close", "close_to_gone")
    ours: dict[str, list[float]] = {name: [] for name in names}
    direct: dict[str, list[float]] = {name: [] for name in names}
    # One of each first, not kept: the page cache and the sandbox's probe warm up.
    await cold_skillbox(setup, errlog, {name: [] for name in names})
    await cold_direct(setup, errlog, {name: [] for name in names})
    for _ in range(runs):
        await cold_skillbox(setup, errlog, ours)
        await cold_direct(setup, errlog, direct)
    log(f"cold: {runs} starts each")
    return {"skillbox": ours, "direct": direct}


# --- 2. warm loads over /mcp -------------------------------------------------------------------


class HttpSession:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session: ClientSession | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> ClientSession:
        read, write = await self._stack.enter_async_context(streamable_http_client(self.url))
        self.session = await self._stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        return self.session

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()


async def timed_load(session: ClientSession, skill: str) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await session.call_tool("load_skill", {"skill": skill})
    return time.perf_counter() - started, result


async def warm(setup: Setup, rounds: int, sessions: int) -> dict[str, Any]:
    setup.data.mkdir(parents=True, exist_ok=True)
    process, rpc = start_serve(setup.skillbox, [
        str(setup.root), "--listen", "127.0.0.1:0", "--data-dir", str(setup.data), "--no-watch",
    ])
    url = rpc.rsplit("/", 1)[0] + "/mcp"
    samples: dict[str, list[float]] = {
        "cold_load": [], "warm_load": [], "warm_first_call": [], "plain_load": [],
        "a_close_to_gone": [], "b_close": [], "first_request": [],
        "second_request": [],
    }
    facts: dict[str, Any] = {"url": url}
    try:
        for round_number in range(rounds + 1):
            keep = round_number > 0  # the first round warms up and is not kept
            holder = HttpSession(url)
            a = await holder.__aenter__()
            try:
                # The SDK's first request in a new HTTP session costs it about 5 ms more,
                # whatever the request (the server answers the same in under 1 ms): a first
                # `tools/list`, timed on its own, keeps that out of the loads.
                await a.list_tools()
                spent, loaded = await timed_load(a, SKILL)
                check_loaded(loaded, "/mcp session A")
                await list_has(a, TOOL, "/mcp session A")
                check_answer(await a.call_tool(TOOL, {"city": CITY}), "/mcp session A")
                servers = python_with_marker(setup.marker)
                if len(servers) != 1:
                    raise SystemExit(f"/mcp: expected one server process, found {servers}")
                facts["server_process"] = describe_process(servers[0])
                if keep:
                    samples["cold_load"].append(spent)
                for _ in range(sessions):
                    other = HttpSession(url)
                    b = await other.__aenter__()
                    try:
                        started = time.perf_counter()
                        await b.list_tools()
                        first_request = time.perf_counter() - started
                        started = time.perf_counter()
                        await b.list_tools()
                        second_request = time.perf_counter() - started
                        spent, loaded = await timed_load(b, SKILL)
                        check_loaded(loaded, "/mcp session B")
                        await list_has(b, TOOL, "/mcp session B")
                        started = time.perf_counter()
                        answer = await b.call_tool(TOOL, {"city": CITY})
                        first_call = time.perf_counter() - started
                        check_answer(answer, "/mcp session B")
                        plain_spent, plain = await timed_load(b, PLAIN)
                        if plain.is_error:
                            raise SystemExit(f"/mcp: load_skill of {PLAIN} failed")
                        if python_with_marker(setup.marker) != servers:
                            raise SystemExit("/mcp: session B's load did not reuse A's server: "
                                             f"{servers} -> {python_with_marker(setup.marker)}")
                        closing = time.perf_counter()
                    finally:
                        await other.__aexit__(None, None, None)
                    closed = time.perf_counter() - closing
                    if python_with_marker(setup.marker) != servers:
                        raise SystemExit("/mcp: the server did not outlive session B while A held"
                                         " it")
                    if keep:
                        samples["warm_load"].append(spent)
                        samples["first_request"].append(first_request)
                        samples["second_request"].append(second_request)
                        samples["warm_first_call"].append(first_call)
                        samples["plain_load"].append(plain_spent)
                        samples["b_close"].append(closed)
            finally:
                closing = time.perf_counter()
                await holder.__aexit__(None, None, None)
            gone = wait_gone(setup.marker)
            if gone is None:
                raise SystemExit(f"/mcp: the server outlived its last session: "
                                 f"{with_marker(setup.marker)}")
            if keep:
                samples["a_close_to_gone"].append(time.perf_counter() - closing)
        log(f"warm: {rounds} rounds of a cold load and {sessions} warm loads")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    facts["gone_after_serve_exit"] = wait_gone(setup.marker) is not None
    return {"samples": samples, "facts": facts}


# --- 3. tool calls -----------------------------------------------------------------------------


async def calls(setup: Setup, errlog: Any, count: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        before = children(os.getpid())
        read, write = await stack.enter_async_context(
            stdio_client(setup.skillbox_parameters(), errlog=errlog))
        ours = await stack.enter_async_context(ClientSession(read, write))
        await ours.initialize()
        skillbox_pid = (children(os.getpid()) - before).pop()
        check_loaded(await ours.call_tool("load_skill", {"skill": SKILL}), "calls")
        await list_has(ours, TOOL, "calls")
        (our_server,) = python_with_marker(setup.marker)

        read, write = await stack.enter_async_context(
            stdio_client(setup.direct_parameters(), errlog=errlog))
        direct = await stack.enter_async_context(ClientSession(read, write))
        await direct.initialize()
        await list_has(direct, SERVER_TOOL, "calls")
        direct_server = (set(python_with_marker(setup.marker)) - {our_server}).pop()

        sides = [
            ("skillbox", ours, TOOL),
            ("direct", direct, SERVER_TOOL),
        ]
        # What each side offers and answers: the server declares an output schema and answers
        # structured content too; the SDK's `call_tool` validates that content against the
        # schema when the listing had one. `request` sends the same `tools/call` without that
        # step, so both sides' client work is the same.
        for name, session, tool in sides:
            listed = next(t for t in (await session.list_tools()).tools if t.name == tool)
            answer = await session.call_tool(tool, {"city": CITY})
            results.setdefault("offered", {})[name] = {
                "output_schema": listed.output_schema is not None,
                "structured_content": answer.structured_content is not None,
            }

        async def call_tool(session: ClientSession, tool: str) -> Any:
            return await session.call_tool(tool, {"city": CITY})

        async def request(session: ClientSession, tool: str) -> Any:
            return await session.send_request(
                types.CallToolRequest(
                    params=types.CallToolRequestParams(name=tool, arguments={"city": CITY})
                ),
                types.CallToolResult,
            )

        kinds = {"call_tool": call_tool, "request": request}
        for _ in range(WARMUP_CALLS):
            for kind in kinds.values():
                for _name, session, tool in sides:
                    check_answer(await kind(session, tool), "warm-up")
        times: dict[str, dict[str, list[float]]] = {
            kind: {name: [] for name, _, _ in sides} for kind in kinds
        }
        tree = [pid for pid in process_tree(skillbox_pid) if pid != our_server]
        cpu_before = {
            "skillbox_process_tree": cpu_ns(tree),
            "server_via_skillbox": cpu_ns([our_server]),
            "server_direct": cpu_ns([direct_server]),
        }
        for _ in range(count):
            for kind_name, kind in kinds.items():
                for name, session, tool in sides:
                    started = time.perf_counter()
                    result = await kind(session, tool)
                    times[kind_name][name].append(time.perf_counter() - started)
                    check_answer(result, name)
        cpu_after = {
            "skillbox_process_tree": cpu_ns(tree),
            "server_via_skillbox": cpu_ns([our_server]),
            "server_direct": cpu_ns([direct_server]),
        }
        results["times"] = times
        results["cpu_us_per_call"] = {
            key: round((cpu_after[key] - cpu_before[key]) / (count * len(kinds)) / 1000, 1)
            for key in cpu_before
        }
        results["skillbox_tree_processes"] = len(tree)
        results["servers"] = {
            "via_skillbox": describe_process(our_server),
            "direct": describe_process(direct_server),
        }
    if wait_gone(setup.marker) is None:
        raise SystemExit(f"calls: a server outlived its session: {with_marker(setup.marker)}")
    log(f"calls: {count} of each kind per side")
    return results


# --- 4. one-shot clients -----------------------------------------------------------------------


def hyperfine(setup: Setup, runs: int, out: Path) -> dict[str, Any]:
    """Whole one-shot processes, in HYPERFINE_BATCHES batches whose order alternates (hyperfine
    runs its commands one after the other, so one batch would time each in its own stretch of
    machine noise); the batches' times are pooled. A Python loop alternating the commands
    run by run when hyperfine is not installed."""
    script = Path(__file__).resolve()
    base = f"{sys.executable} {script} oneshot --work {setup.work} --root {setup.root}" \
           f" --skillbox {setup.skillbox} --python {setup.python} --marker {setup.marker}"
    cases = {
        "skillbox": f"{base} skillbox",
        "direct": f"{base} direct",
        "client imports only": f"{base} imports",
    }
    found: dict[str, list[float]] = {name: [] for name in cases}
    if shutil.which("hyperfine") is None:
        log("hyperfine not installed: timing the one-shot clients with a Python loop")
        tool = "Python loop"
        for _ in range(HYPERFINE_WARMUP):
            for command in cases.values():
                subprocess.run(command.split(), check=True)
        for _ in range(runs):
            for name, command in cases.items():
                started = time.perf_counter()
                subprocess.run(command.split(), check=True)
                found[name].append(time.perf_counter() - started)
    else:
        tool = "hyperfine"
        batches = min(HYPERFINE_BATCHES, runs)
        for batch in range(batches):
            names = list(cases) if batch % 2 == 0 else list(reversed(cases))
            count = runs // batches + (1 if batch < runs % batches else 0)
            export = out / f"skill-servers-hyperfine-{batch + 1}.json"
            subprocess.run(
                ["hyperfine", "-N", "--warmup", str(HYPERFINE_WARMUP if batch == 0 else 1),
                 "--runs", str(count), "--export-json", str(export),
                 *[f"--command-name={name}" for name in names],
                 *[cases[name] for name in names]],
                check=True, stdout=sys.stderr,
            )
            for name, result in zip(names, json.loads(export.read_text())["results"]):
                found[name].extend(result["times"])
    return {
        name: {"median": statistics.median(values), "min": min(values),
               "mean": statistics.mean(values), "tool": tool, "times": values}
        for name, values in found.items()
    }


async def oneshot(arguments: argparse.Namespace) -> None:
    if arguments.case == "imports":
        return
    setup = Setup(arguments, arguments.work, arguments.root, arguments.marker)
    with open(os.devnull, "w") as errlog:
        if arguments.case == "skillbox":
            async with stdio_client(setup.skillbox_parameters(), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    check_loaded(await session.call_tool("load_skill", {"skill": SKILL}),
                                 "oneshot")
                    check_answer(await session.call_tool(TOOL, {"city": CITY}), "oneshot")
        else:
            async with stdio_client(setup.direct_parameters(), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    check_answer(await session.call_tool(SERVER_TOOL, {"city": CITY}), "oneshot")


# --- the report --------------------------------------------------------------------------------


def ms(value: float, digits: int = 1) -> str:
    return f"{value * 1000:,.{digits}f} ms"


def med_min(values: list[float], digits: int = 1) -> str:
    return f"{ms(statistics.median(values), digits)} ({ms(min(values), digits)})"


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs > 0 else "-"


def added(ours: float, theirs: float, digits: int = 1) -> str:
    return f"{(ours - theirs) * 1000:+,.{digits}f} ms"


def report(results: dict[str, Any], settings: dict[str, int]) -> str:
    c_ours, c_direct = results["cold"]["skillbox"], results["cold"]["direct"]
    median = statistics.median
    n = settings["cold"]
    lines = [
        "| measure | through skillbox | direct (the SDK client spawns `python3 server.py`)"
        " | skillbox / direct | added |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]

    def row(label: str, ours: list[float], theirs: list[float] | None, digits: int = 1) -> None:
        if theirs is None:
            lines.append(f"| {label} | {med_min(ours, digits)} | | | |")
            return
        lines.append(
            f"| {label} | {med_min(ours, digits)} | {med_min(theirs, digits)}"
            f" | **{ratio(median(ours), median(theirs))}**"
            f" | {added(median(ours), median(theirs), digits)} |"
        )

    row(f"**cold**: spawn → `{TOOL}` listed (skillbox: spawn, initialize, `load_skill`,"
        f" `tools/list`; direct: spawn, initialize, `tools/list`), median (min) of {n}",
        c_ours["spawn_to_listed"], c_direct["spawn_to_listed"])
    row("cold: the `load_skill` round trip that starts the server (beside the direct spawn →"
        " initialize → `tools/list`)", c_ours["load_skill"], c_direct["spawn_to_listed"])
    row("cold: spawn → initialize answer (skillbox / the server)",
        c_ours["spawn_initialize"], c_direct["spawn_initialize"])
    row("cold: `tools/list` after the load / after initialize", c_ours["tools_list"],
        c_direct["tools_list"], 2)
    row(f"cold: the first `{TOOL}` call (direct: `{SERVER_TOOL}`)", c_ours["first_call"],
        c_direct["first_call"], 2)
    row("cold: spawn → first answer", c_ours["spawn_to_answer"], c_direct["spawn_to_answer"])
    row("cold: `load_skill` → first answer (skillbox; direct: spawn → first answer)",
        c_ours["load_to_answer"], c_direct["spawn_to_answer"])
    row(f"for scale: `load_skill` of `{PLAIN}` (no servers), stdio", c_ours["load_plain"], None, 2)
    row("closing the client (stdin closed → process exited)", c_ours["close"], c_direct["close"])
    row("closing the client → no server process left", c_ours["close_to_gone"], None)

    warm = results["warm"]["samples"]
    rounds, sessions = settings["warm_rounds"], settings["warm_sessions"]
    lines.append(
        f"| **warm** (`serve`, /mcp): session B's `load_skill` while A holds the server,"
        f" median (min) of {len(warm['warm_load'])} | {med_min(warm['warm_load'], 2)}"
        f" | cold over /mcp (session A's load), {rounds}: {med_min(warm['cold_load'])}"
        f" | cold / warm: **{median(warm['cold_load']) / median(warm['warm_load']):.0f}x**"
        f" | {added(median(warm['cold_load']), median(warm['warm_load']))} |"
    )
    lines.append(
        f"| warm: p90 of B's `load_skill` | {ms(percentile(warm['warm_load'], 0.9), 2)} | | | |"
    )
    row(f"for scale: `load_skill` of `{PLAIN}` (no servers) over /mcp", warm["plain_load"], None, 2)
    lines.append(
        "| for scale: B's first request (`tools/list`) over /mcp / its second (the SDK client's"
        f" first request in a session is slower) | {med_min(warm['first_request'], 2)} /"
        f" {med_min(warm['second_request'], 2)} | | | |"
    )
    row(f"warm: B's first `{TOOL}` call over /mcp", warm["warm_first_call"], None, 2)
    row("/mcp: session A (the last holder) closed → no server process left",
        warm["a_close_to_gone"], None)

    call = results["calls"]
    count = settings["calls"]
    for kind, label in (("call_tool", "the SDK's `call_tool`"),
                        ("request", "a bare `tools/call` request")):
        ours, theirs = call["times"][kind]["skillbox"], call["times"][kind]["direct"]
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            mine, peer = percentile(ours, fraction), percentile(theirs, fraction)
            lines.append(
                f"| **tool call** `{TOOL}` (direct: `{SERVER_TOOL}`), stdio, {label}, {name} of"
                f" {count} | {ms(mine, 3)} | {ms(peer, 3)} | **{ratio(mine, peer)}**"
                f" | {added(mine, peer, 3)} |"
            )
    cpu = call["cpu_us_per_call"]
    lines.append(
        "| CPU per call (both kinds): the server / skillbox's processes"
        f" | {cpu['server_via_skillbox']:,.0f} / {cpu['skillbox_process_tree']:,.0f} µs"
        f" | {cpu['server_direct']:,.0f} µs / - | | |"
    )

    oneshot = results["oneshot"]
    if oneshot:
        tool = oneshot["skillbox"]["tool"]
        mine, peer = oneshot["skillbox"]["median"], oneshot["direct"]["median"]
        lines.append(
            f"| **one-shot** client ({tool} median of {settings['oneshot_runs']}, in"
            f" {min(HYPERFINE_BATCHES, settings['oneshot_runs'])} batches): skillbox:"
            " spawn `skillbox mcp`, initialize, `load_skill`, one call, exit; direct: spawn the"
            f" server, initialize, one call, exit | {ms(mine)} | {ms(peer)}"
            f" | **{ratio(mine, peer)}** | {added(mine, peer)} |"
        )
        floor = oneshot["client imports only"]["median"]
        lines.append(
            f"| for scale: the client alone (Python importing the `mcp` SDK, no server)"
            f" | {ms(floor)} | {ms(floor)} | | |"
        )
        lines.append(
            f"| one-shot less the client alone | {ms(mine - floor)} | {ms(peer - floor)}"
            f" | **{ratio(mine - floor, peer - floor)}** | {added(mine, peer)} |"
        )
    lines.append("")
    facts = results["facts"]
    lines.append(f"- server processes: through skillbox {call['servers']['via_skillbox']},"
                 f" direct {call['servers']['direct']}; skillbox's own processes beside the"
                 f" server during the calls: {call['skillbox_tree_processes']}")
    offered = call["offered"]
    lines.append(
        "- output schema listed / structured content answered: through skillbox"
        f" {offered['skillbox']['output_schema']} / {offered['skillbox']['structured_content']},"
        f" direct {offered['direct']['output_schema']} / {offered['direct']['structured_content']}"
        " (the SDK's `call_tool` validates structured content only when the listing had a schema)"
    )
    lines.append(f"- leftover processes with the run's marker at the end: {facts['leftovers']}")
    return "\n".join(lines) + "\n"


async def measure(arguments: argparse.Namespace) -> None:
    out = arguments.out.resolve()
    work = out / "skill-servers-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    marker = f"skill-servers-bench-{uuid.uuid4().hex}"
    root = make_root(work, arguments.vendor, marker)
    setup = Setup(arguments, work, root, marker)
    setup.home.mkdir()
    settings = {
        "cold": arguments.cold, "warm_rounds": arguments.warm_rounds,
        "warm_sessions": arguments.warm_sessions, "calls": arguments.calls,
        "oneshot_runs": arguments.oneshot_runs,
    }
    results: dict[str, Any] = {"settings": settings, "marker": marker}
    with open(work / "stderr.log", "w") as errlog:
        results["cold"] = await cold(setup, errlog, arguments.cold)
        results["warm"] = await warm(setup, arguments.warm_rounds, arguments.warm_sessions)
        results["calls"] = await calls(setup, errlog, arguments.calls)
    results["oneshot"] = hyperfine(setup, arguments.oneshot_runs, out)
    gone = wait_gone(marker)
    leftovers = with_marker(marker)
    results["facts"] = {
        "leftovers": "none" if not leftovers else ", ".join(map(str, leftovers)),
        "leftovers_wait_s": gone,
    }
    table = report(results, settings)

    def raw(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: raw(inner) for key, inner in value.items()}
        if isinstance(value, list) and value and isinstance(value[0], float):
            return [milliseconds(each) for each in value]
        return value

    (out / "skill-servers-results.md").write_text(table)
    (out / "skill-servers-results.json").write_text(
        json.dumps({"times_in_ms": True, **raw(results)}, indent=2) + "\n")
    print(table, end="")
    if leftovers:
        raise SystemExit(f"server processes left after the run: {leftovers}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="mode", required=True)
    measuring = commands.add_parser("measure")
    measuring.add_argument("--skillbox", type=Path, required=True)
    measuring.add_argument("--python", type=Path, required=True,
                           help="the interpreter the direct server runs with")
    measuring.add_argument("--vendor", type=Path, required=True)
    measuring.add_argument("--cold", type=int, default=10)
    measuring.add_argument("--warm-rounds", type=int, default=5)
    measuring.add_argument("--warm-sessions", type=int, default=10)
    measuring.add_argument("--calls", type=int, default=300)
    measuring.add_argument("--oneshot-runs", type=int, default=20)
    measuring.add_argument("--out", type=Path, required=True)
    one = commands.add_parser("oneshot")
    one.add_argument("--work", type=Path, required=True)
    one.add_argument("--root", type=Path, required=True)
    one.add_argument("--skillbox", type=Path, required=True)
    one.add_argument("--python", type=Path, required=True)
    one.add_argument("--marker", required=True)
    one.add_argument("case", choices=["skillbox", "direct", "imports"])
    arguments = parser.parse_args()
    if arguments.mode == "measure":
        for path in ("skillbox", "vendor"):
            setattr(arguments, path, getattr(arguments, path).resolve())
        asyncio.run(measure(arguments))
    else:
        asyncio.run(oneshot(arguments))


if __name__ == "__main__":
    main()
