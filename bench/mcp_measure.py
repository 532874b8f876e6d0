#!/usr/bin/env python3
"""Measurement for bench/mcp.sh: `skillbox mcp` against skillz, through one MCP client.

Runs in the test venv (the `mcp` package, 2.3.0). Both servers are spawned over stdio by the
same client code, on the same skills folder, in one run:

  measure   start-up (spawn to the initialize answer), `tools/list` and `resources/read`
            latencies, a tool call that loads one skill's instructions, the servers' idle RSS,
            and a hyperfine run of the one-shot client below against each; prints a markdown
            table and writes bench/out/mcp-results.{md,json}
  oneshot   spawn a server, initialize, list its tools, exit (what hyperfine times)

Timed work alternates between the two servers (one spawn or one call each in turn), so both
see the same machine noise.
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
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from page_cache import evict_from_page_cache
from serve_process import children, process_tree

# The resource both servers expose (skillz does not expose SKILL.md as a resource).
RESOURCE_SKILL = "mcp-builder"
RESOURCE_PATH = "reference/mcp_best_practices.md"
WARMUP_CALLS = 20
IDLE_SETTLE_SECONDS = 1.0
HYPERFINE_WARMUP = 3
# skillz (FastMCP) asks PyPI for a newer FastMCP at start and draws a banner on stderr; both
# are turned off so that its start-up is measured at its best and without the network.
SKILLZ_ENV = {"FASTMCP_CHECK_FOR_UPDATES": "off", "FASTMCP_SHOW_SERVER_BANNER": "false"}
# Targets, as ratios skillz / skillbox (RSS: skillbox / skillz).
TARGET_START_RATIO = 10.0
TARGET_CALL_RATIO = 2.0
TARGET_RSS_FRACTION = 0.2


def log(message: str) -> None:
    print(f"mcp-bench: {message}", file=sys.stderr, flush=True)


@dataclass
class Server:
    """How to start one server, and the same requests phrased for it."""

    name: str
    command: str
    arguments: list[str]
    environment: dict[str, str]
    resource_uri: str
    load_tool: str
    load_arguments: dict[str, Any]
    times: dict[str, list[float]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def parameters(self, cwd: Path) -> StdioServerParameters:
        return StdioServerParameters(
            command=self.command, args=self.arguments, env=self.environment, cwd=str(cwd)
        )

    def command_line(self) -> list[str]:
        return [self.command, *self.arguments]


def servers(arguments: argparse.Namespace, home: Path) -> list[Server]:
    corpus = str(arguments.corpus)
    # Neither server may find skills outside the corpus: a private, empty HOME for both.
    common = {"HOME": str(home)}
    return [
        Server(
            name="skillbox",
            command=str(arguments.skillbox),
            arguments=["mcp", corpus],
            environment=common,
            resource_uri=f"skill://{RESOURCE_SKILL}/{RESOURCE_PATH}",
            load_tool="load_skill",
            load_arguments={"name": RESOURCE_SKILL},
        ),
        Server(
            name="skillz",
            command=str(arguments.skillz),
            arguments=[corpus],
            environment={**common, **SKILLZ_ENV},
            resource_uri=f"resource://skillz/{RESOURCE_SKILL}/{RESOURCE_PATH}",
            load_tool=RESOURCE_SKILL,
            load_arguments={"task": "Write an MCP server"},
        ),
    ]


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A resident-memory line of /proc/PID/status: VmRSS, or its RssAnon / RssFile parts."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_ns(pid: int) -> int:
    """CPU time so far of every thread of the process tree, in nanoseconds (schedstat)."""
    total = 0
    for each in process_tree(pid):
        for task in Path(f"/proc/{each}/task").glob("*"):
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 3)


class Session:
    """One running server with an initialized client session, kept open across calls."""

    def __init__(self, server: Server, cwd: Path, errlog: Any) -> None:
        self.server = server
        self.cwd = cwd
        self.errlog = errlog
        self.pid = 0
        self.session: ClientSession | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Session:
        before = children(os.getpid())
        read, write = await self._stack.enter_async_context(
            stdio_client(self.server.parameters(self.cwd), errlog=self.errlog)
        )
        self.session = await self._stack.enter_async_context(ClientSession(read, write))
        initialized = await self.session.initialize()
        spawned = children(os.getpid()) - before
        if len(spawned) != 1:
            raise SystemExit(f"{self.server.name}: cannot tell the server process from {spawned}")
        self.pid = spawned.pop()
        self.server.facts["protocol_version"] = initialized.protocol_version
        self.server.facts["server_info"] = (
            f"{initialized.server_info.name} {initialized.server_info.version}"
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()


async def spawn_to_initialize(server: Server, cwd: Path, errlog: Any) -> float:
    started = time.perf_counter()
    async with stdio_client(server.parameters(cwd), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return time.perf_counter() - started


def check_listing(server: Server, tool_names: list[str], resource_uris: list[str]) -> None:
    if server.load_tool not in tool_names:
        raise SystemExit(f"{server.name}: tool {server.load_tool} missing from {tool_names}")
    if server.resource_uri not in resource_uris:
        raise SystemExit(f"{server.name}: resource {server.resource_uri} not listed")


async def describe(opened: Session, corpus: Path) -> None:
    """What the server exposes, and a check that it answers with the real file."""
    session, server = opened.session, opened.server
    assert session is not None
    tools = [tool.name for tool in (await session.list_tools()).tools]
    resources = [str(resource.uri) for resource in (await session.list_resources()).resources]
    prompts = [prompt.name for prompt in (await session.list_prompts()).prompts]
    check_listing(server, tools, resources)
    contents = (await session.read_resource(server.resource_uri)).contents
    expected = (corpus / RESOURCE_SKILL / RESOURCE_PATH).read_text()
    if len(contents) != 1 or getattr(contents[0], "text", None) != expected:
        raise SystemExit(f"{server.name}: {server.resource_uri} does not read as the file")
    server.facts.update(
        tools=len(tools),
        tool_names=tools,
        resources=len(resources),
        skill_md_resources=sum(uri.endswith("/SKILL.md") for uri in resources),
        prompts=len(prompts),
    )


async def timed_calls(opened: list[Session], calls: int) -> None:
    """Each request `calls` times per server, alternating servers call by call."""
    requests = {
        "tools/list": lambda s, _server: s.list_tools(),
        "resources/read": lambda s, server: s.read_resource(server.resource_uri),
        "tools/call (load a skill)": lambda s, server: s.call_tool(
            server.load_tool, server.load_arguments
        ),
    }
    for label, request in requests.items():
        for each in opened:
            for _ in range(WARMUP_CALLS):
                await request(each.session, each.server)
            each.server.times[label] = []
        cpu_before = {each.server.name: cpu_ns(each.pid) for each in opened}
        for _ in range(calls):
            for each in opened:
                started = time.perf_counter()
                result = await request(each.session, each.server)
                each.server.times[label].append(time.perf_counter() - started)
                if getattr(result, "is_error", False):
                    raise SystemExit(f"{each.server.name}: {label} failed: {result}")
        for each in opened:
            spent = cpu_ns(each.pid) - cpu_before[each.server.name]
            each.server.facts.setdefault("cpu_us_per_call", {})[label] = round(
                spent / calls / 1000, 1
            )
        log(f"{label}: {calls} calls each")


# The one-shot client's floor: the same interpreter importing the same client modules, no server.
CLIENT_FLOOR = "client imports only"


def hyperfine(server_list: list[Server], cwd: Path, runs: int, out: Path) -> dict[str, Any]:
    if shutil.which("hyperfine") is None:
        log("hyperfine not installed: the one-shot client times are left out")
        return {}
    script = Path(__file__).resolve()
    names, commands = [], []
    for server in server_list:
        environment = " ".join(f"--env {key}={value}" for key, value in server.environment.items())
        names.append(server.name)
        commands.append(
            f"{sys.executable} {script} oneshot --cwd {cwd} {environment} -- "
            + " ".join(server.command_line())
        )
    names.append(CLIENT_FLOOR)
    commands.append(f"{sys.executable} {script} oneshot --imports-only")
    export = out / "mcp-hyperfine.json"
    subprocess.run(
        ["hyperfine", "-N", "--warmup", str(HYPERFINE_WARMUP), "--runs", str(runs),
         "--export-json", str(export), *[f"--command-name={name}" for name in names],
         *commands],
        check=True, stdout=sys.stderr,
    )
    results = json.loads(export.read_text())["results"]
    return {
        name: {"mean": result["mean"], "median": result["median"], "stddev": result["stddev"]}
        for name, result in zip(names, results)
    }


def ratio(peer: float, ours: float) -> float:
    return round(peer / ours, 2) if ours > 0 else float("inf")


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def report(server_list: list[Server], oneshot: dict[str, Any], spawns: int, calls: int) -> str:
    ours, peer = server_list
    lines = [
        "| measure | skillbox | skillz | skillz / skillbox | target |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    start_ours = statistics.median(ours.times["start"])
    start_peer = statistics.median(peer.times["start"])
    start_ratio = ratio(start_peer, start_ours)
    lines.append(
        f"| spawn → initialize answer, median of {spawns} | {milliseconds(start_ours):.1f} ms"
        f" | {milliseconds(start_peer):.1f} ms | **{start_ratio:.1f}x** |"
        f" ≥ {TARGET_START_RATIO:.0f}x: {verdict(start_ratio >= TARGET_START_RATIO)} |"
    )
    for label in ("tools/list", "resources/read", "tools/call (load a skill)"):
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            mine = percentile(ours.times[label], fraction)
            theirs = percentile(peer.times[label], fraction)
            call_ratio = ratio(theirs, mine)
            target = (
                f"≥ {TARGET_CALL_RATIO:.0f}x: {verdict(call_ratio >= TARGET_CALL_RATIO)}"
                if label != "tools/call (load a skill)" else "(extra)"
            )
            lines.append(
                f"| `{label}` {name} of {calls} | {milliseconds(mine):.3f} ms"
                f" | {milliseconds(theirs):.3f} ms | **{call_ratio:.1f}x** | {target} |"
            )
        mine = ours.facts["cpu_us_per_call"][label]
        theirs = peer.facts["cpu_us_per_call"][label]
        lines.append(
            f"| `{label}` server CPU per call | {mine:.0f} µs | {theirs:.0f} µs"
            f" | **{ratio(theirs, mine):.1f}x** | (extra) |"
        )
    for key, label in (("rss_idle_kib", "idle RSS after initialize"),
                       ("rss_after_kib", "RSS after the timed calls")):
        mine, theirs = ours.facts[key], peer.facts[key]
        fraction = mine / theirs if theirs else float("inf")
        target = (
            f"≤ 1/5: {verdict(fraction <= TARGET_RSS_FRACTION)}" if key == "rss_idle_kib"
            else "(extra)"
        )
        lines.append(
            f"| {label} | {mine / 1024:.1f} MiB | {theirs / 1024:.1f} MiB"
            f" | **{ratio(theirs, mine):.1f}x** (skillbox = {fraction:.3f} of skillz) | {target} |"
        )
    lines.append(
        f"| idle RSS: anonymous / file-backed | {ours.facts['rss_idle_anon_kib'] / 1024:.1f}"
        f" / {ours.facts['rss_idle_file_kib'] / 1024:.1f} MiB"
        f" | {peer.facts['rss_idle_anon_kib'] / 1024:.1f}"
        f" / {peer.facts['rss_idle_file_kib'] / 1024:.1f} MiB | | (extra) |"
    )
    if oneshot:
        mine, theirs = oneshot[ours.name]["median"], oneshot[peer.name]["median"]
        lines.append(
            "| one-shot client (spawn, initialize, `tools/list`, exit), hyperfine median"
            f" | {milliseconds(mine):.1f} ms | {milliseconds(theirs):.1f} ms"
            f" | **{ratio(theirs, mine):.1f}x** | (user-visible) |"
        )
        floor = oneshot[CLIENT_FLOOR]["median"]
        lines.append(
            f"| for reference: the one-shot client with no server (Python importing the `mcp`"
            f" client), hyperfine median | {milliseconds(floor):.1f} ms | | | |"
        )
    lines.append("")
    for server in server_list:
        facts = server.facts
        lines.append(
            f"- {server.name} ({facts['server_info']}, protocol {facts['protocol_version']}):"
            f" {facts['tools']} tools, {facts['resources']} resources"
            f" ({facts['skill_md_resources']} of them SKILL.md), {facts['prompts']} prompts;"
            f" server processes: {facts['processes']}"
        )
    return "\n".join(lines) + "\n"


async def measure(arguments: argparse.Namespace) -> None:
    out = arguments.out.resolve()
    work = out / "mcp-work"
    home = work / "home"
    shutil.rmtree(work, ignore_errors=True)
    home.mkdir(parents=True)
    server_list = servers(arguments, home)
    # The file-backed part of RSS depends on how the binary's pages came into the cache: the
    # same binary freshly written (by cargo or cp) showed about 2 MiB more than after being
    # read back from disk. Evicting it first measures every build in one state.
    evict_from_page_cache(str(arguments.skillbox))
    with open(os.devnull, "w") as errlog:
        for server in server_list:
            await spawn_to_initialize(server, work, errlog)
            server.times["start"] = []
        for _ in range(arguments.spawns):
            for server in server_list:
                server.times["start"].append(await spawn_to_initialize(server, work, errlog))
        log(f"start-up: {arguments.spawns} spawns each")

        opened = [Session(server, work, errlog) for server in server_list]
        for each in opened:
            await each.__aenter__()
        try:
            await asyncio.sleep(IDLE_SETTLE_SECONDS)
            for each in opened:
                tree = process_tree(each.pid)
                each.server.facts["processes"] = len(tree)
                each.server.facts["rss_idle_kib"] = sum(rss_kib(pid) for pid in tree)
                for field, key in (("RssAnon", "rss_idle_anon_kib"), ("RssFile", "rss_idle_file_kib")):
                    each.server.facts[key] = sum(rss_kib(pid, field) for pid in tree)
            for each in opened:
                await describe(each, arguments.corpus)
            await timed_calls(opened, arguments.calls)
            for each in opened:
                each.server.facts["rss_after_kib"] = sum(
                    rss_kib(pid) for pid in process_tree(each.pid)
                )
        finally:
            for each in reversed(opened):
                await each.__aexit__(None, None, None)

    oneshot = hyperfine(server_list, work, arguments.hyperfine_runs, out)
    table = report(server_list, oneshot, arguments.spawns, arguments.calls)
    raw = {
        server.name: {
            "command": server.command_line(),
            "environment": server.environment,
            "facts": server.facts,
            "times_ms": {
                label: [milliseconds(value) for value in values]
                for label, values in server.times.items()
            },
        }
        for server in server_list
    }
    raw["oneshot"] = oneshot
    (out / "mcp-results.md").write_text(table)
    (out / "mcp-results.json").write_text(json.dumps(raw, indent=2) + "\n")
    print(table, end="")


async def oneshot(arguments: argparse.Namespace) -> None:
    if arguments.imports_only:
        return
    if not arguments.command:
        raise SystemExit("oneshot: give the server command after --")
    environment = dict(pair.split("=", 1) for pair in arguments.env)
    parameters = StdioServerParameters(
        command=arguments.command[0], args=arguments.command[1:], env=environment,
        cwd=arguments.cwd,
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(parameters, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                if not tools.tools:
                    raise SystemExit("oneshot: the server lists no tools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="mode", required=True)
    measuring = commands.add_parser("measure")
    measuring.add_argument("--skillbox", type=Path, required=True)
    measuring.add_argument("--skillz", type=Path, required=True)
    measuring.add_argument("--corpus", type=Path, required=True)
    measuring.add_argument("--spawns", type=int, default=20)
    measuring.add_argument("--calls", type=int, default=500)
    measuring.add_argument("--hyperfine-runs", type=int, default=20)
    measuring.add_argument("--out", type=Path, required=True)
    one = commands.add_parser("oneshot")
    one.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    one.add_argument("--cwd", default=None)
    one.add_argument(
        "--imports-only", action="store_true",
        help="exit at once: the client's start (interpreter and imports) without a server",
    )
    one.add_argument("command", nargs=argparse.REMAINDER)
    arguments = parser.parse_args()
    if arguments.mode == "measure":
        for path in ("corpus", "skillbox", "skillz"):
            setattr(arguments, path, getattr(arguments, path).resolve())
        asyncio.run(measure(arguments))
    else:
        if arguments.command[:1] == ["--"]:
            arguments.command = arguments.command[1:]
        asyncio.run(oneshot(arguments))


if __name__ == "__main__":
    main()
