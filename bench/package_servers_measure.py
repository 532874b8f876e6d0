#!/usr/bin/env python3
"""Measurement for bench/package_servers.sh: servers from npm and PyPI (issue 37), started by
`load_skill` from skillbox's store, against the same servers started the way other agents start
them (`npx -y …`, `uvx …`), through one MCP client; and what `skillbox add` pays to install
them ahead.

Runs in the test venv (the `mcp` package, 2.3.0). Everything runs with a private HOME (npm's,
npx's and uv's caches live there, so they are warm only from this run's own warm-ups), the
system PATH (`/usr/local/bin:/usr/bin:/bin`: the `node`, `npm`, `npx` and `python3` the sandbox
runs), and the caller's other variables (the registries' settings and certificates).

  measure   1. starts: a new `skillbox mcp` per sample, initialized before the clock starts;
               the clock covers `load_skill` of a skill whose one server is a package server
               and the first `tools/call` of that server. Beside it, the same client spawns
               the skill's own line (`npx -y @modelcontextprotocol/server-everything`,
               `uvx mcp-server-time@…`) with warm caches; the clock covers spawn, initialize,
               `tools/list` and the first `tools/call`. And, for where the time goes, the
               stored tree's entry spawned bare (no skillbox, no sandbox). Samples alternate.
            2. adds: `skillbox add` of a skill with both servers, of the same skill without its
               `.mcp.json`, of each one-server skill, and for reference `npm install` of the
               package and `pip install --target` / `uv tool install` of the PyPI one, each in
               a fresh folder (npm's cache warm; skillbox's store empty), alternating.
            3. the digest check at start: `skillbox verify` of a project whose skill has a
               package server against one whose skill has none (both digest the skill; the
               first also the stored tree, as every start does).
            Prints a markdown table and writes bench/out/package-servers-results.{md,json}.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import children, process_tree  # noqa: E402

PATH = "/usr/local/bin:/usr/bin:/bin"
NPM_PACKAGE = "@modelcontextprotocol/server-everything"
PYPI_PACKAGE = "mcp-server-time"
# The PyPI server's version, pinned in the skill as the tests pin it; the npm line is left open,
# as published skills write it (`add` pins it in the lock).
TIME_VERSION = "2026.10.19"
NPX_ARGS = ["-y", NPM_PACKAGE]
UVX_ARGS = [f"{PYPI_PACKAGE}@{TIME_VERSION}"]
ECHO = ("echo", {"message": "hello"})
NOW = ("get_current_time", {"timezone": "Europe/Oslo"})
GONE_TIMEOUT = 20.0
VERIFY_WARMUP = 2
# prctl(2): orphans of this process (a server whose launcher exited) become its children, so
# the check for leftover processes sees them.
PR_SET_CHILD_SUBREAPER = 36

# The servers measured: the skill that declares the server alone, its `.mcp.json` line, the
# tool called first and a check of its answer.
SERVERS: dict[str, dict[str, Any]] = {
    "npm": {
        "skill": "everything",
        "server": "everything",
        "line": {"command": "npx", "args": NPX_ARGS},
        "tool": ECHO,
        "answer": lambda text: text == "Echo: hello",
    },
    "pypi": {
        "skill": "time",
        "server": "time",
        "line": {"command": "uvx", "args": UVX_ARGS},
        "tool": NOW,
        "answer": lambda text: '"timezone": "Europe/Oslo"' in text,
    },
}
SKILL_BODY = "---\nname: {name}\ndescription: {what} Use when measuring package servers.\n---\n" \
             "Call the tools of its servers.\n"


def log(message: str) -> None:
    print(f"package-servers-bench: {message}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


# --- processes ---------------------------------------------------------------------------------


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("warning: prctl(PR_SET_CHILD_SUBREAPER) failed; orphaned servers are not seen")


def leftovers() -> list[int]:
    """Processes below this one, after reaping the exited ones."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    return [pid for pid in process_tree(os.getpid()) if pid != os.getpid()]


def wait_no_leftovers(where: str) -> None:
    started = time.monotonic()
    while found := leftovers():
        if time.monotonic() - started > GONE_TIMEOUT:
            described = []
            for pid in found:
                try:
                    line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                    described.append(f"{pid}: {line.decode(errors='replace')[:160]}")
                except OSError:
                    described.append(str(pid))
            raise SystemExit(f"{where}: processes left after the client closed:\n"
                             + "\n".join(described))
        time.sleep(0.02)


# --- the setup ---------------------------------------------------------------------------------


class Setup:
    def __init__(self, arguments: argparse.Namespace, work: Path) -> None:
        self.skillbox = str(arguments.skillbox)
        self.uv = str(arguments.uv)
        self.uvx = str(arguments.uvx)
        self.work = work
        self.home = work / "home"
        self.sources = work / "sources"
        self.main = work / "main"
        # Per registry: the stored tree skillbox installed (`prepare_main`).
        self.trees: dict[str, dict[str, Any]] = {}
        base = {key: value for key, value in os.environ.items()
                if not key.startswith("SKILLBOX_")
                and key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_CACHE_DIR",
                                "npm_config_cache", "NPM_CONFIG_CACHE", "XDG_CACHE_HOME")}
        base.update({"HOME": str(self.home), "PATH": PATH})
        self.environment = base

    def skillbox_env(self, folder: Path) -> dict[str, str]:
        """The environment of a skillbox run whose config and cache folders are in `folder`."""
        return {**self.environment, "SKILLBOX_CONFIG_DIR": str(folder / "config"),
                "SKILLBOX_CACHE_DIR": str(folder / "cache")}


def write_sources(setup: Setup) -> None:
    """`everything` (the npm server alone), `time` (the PyPI one alone), `clock` (both), and
    `plain/clock` (the same skill without its `.mcp.json`)."""
    skills = {
        "everything": ("Echoes text.", {"everything": SERVERS["npm"]["line"]}),
        "time": ("Tells the time.", {"time": SERVERS["pypi"]["line"]}),
        "clock": ("Tells the time and echoes text.",
                  {"everything": SERVERS["npm"]["line"], "time": SERVERS["pypi"]["line"]}),
    }
    for name, (what, servers) in skills.items():
        folder = setup.sources / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL_BODY.format(name=name, what=what))
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
    plain = setup.sources / "plain" / "clock"
    plain.mkdir(parents=True)
    (plain / "SKILL.md").write_text((setup.sources / "clock" / "SKILL.md").read_text())


def new_project(setup: Setup, folder: Path, source: Path) -> Path:
    """A project in `folder/project` holding a copy of `source` at `src/<name>`."""
    project = folder / "project"
    (project / "src").mkdir(parents=True)
    shutil.copytree(source, project / "src" / source.name)
    for name in ("config", "cache"):
        (folder / name).mkdir()
    # The sandbox runs servers as another uid: the skill must be readable by everyone.
    subprocess.run(["chmod", "-R", "o+rX", str(folder)], check=True)
    return project


def skillbox_add(setup: Setup, folder: Path, project: Path,
                 name: str) -> tuple[float, dict[str, float]]:
    """Time `skillbox add ./src/NAME`; also where its time went (see `run_watched`)."""
    spent, steps, code, said = run_watched([setup.skillbox, "add", f"./src/{name}"], project,
                                           setup.skillbox_env(folder))
    if code != 0:
        raise SystemExit(f"skillbox add ./src/{name} failed in {project}:\n{said}")
    return spent, steps


WATCH_INTERVAL = 0.01


def run_watched(command: list[str], cwd: Path,
                env: dict[str, str]) -> tuple[float, dict[str, float], int, str]:
    """Run `command`, watching its child processes in /proc every 10 ms: (seconds, seconds per
    kind of child (the registry tools it ran) and "skillbox itself" for the rest, exit code,
    what it wrote on stderr)."""
    seen: dict[int, list[Any]] = {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        while process.poll() is None:
            now = time.perf_counter()
            for child in children(process.pid):
                try:
                    argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                argv = [part.decode(errors="replace") for part in argv if part]
                if not argv:
                    continue
                # Read each time: until the child has exec'd, it shows skillbox's command line.
                if child in seen:
                    seen[child][0], seen[child][2] = step_label(argv), now
                else:
                    seen[child] = [step_label(argv), now, now]
            time.sleep(WATCH_INTERVAL)
        spent = time.perf_counter() - started
        err.seek(0)
        said = err.read().decode(errors="replace")
    steps: dict[str, float] = {}
    spans = []
    for label, first, last in seen.values():
        # Seen from `first` to `last`: it ran about one interval longer.
        steps[label] = steps.get(label, 0.0) + last - first + WATCH_INTERVAL
        spans.append((first, last + WATCH_INTERVAL))
    # The tools of several servers run side by side: skillbox's own time is when none ran.
    busy, reached = 0.0, float("-inf")
    for first, last in sorted(spans):
        if last > reached:
            busy += last - max(first, reached)
            reached = last
    steps["skillbox itself (between the tools)"] = spent - busy
    return spent, steps, process.returncode, said


def step_label(argv: list[str]) -> str:
    program, args = Path(argv[0]).name, argv[1:]
    if "compileall" in args:
        return "python3 -m compileall (bytecode, ahead)"
    if "--dry-run" in args:
        return "pip install --dry-run --report (resolving)"
    if "--require-hashes" in args:
        return "pip install --require-hashes --no-deps --target (installing)"
    if any("sys.version_info" in arg for arg in args):
        return "python3 -c (its version)"
    npm = next((at for at, arg in enumerate(argv) if Path(arg).name in ("npm", "npm-cli.js")),
               None)
    if npm is not None:
        verb = next((arg for arg in argv[npm + 1:] if not arg.startswith("-")), "?")
        return f"npm {verb}"
    return " ".join([program, *args])[:60]


def locked_servers(project: Path, skill: str) -> dict[str, Any]:
    lock = json.loads((project / "skillbox.lock").read_text())
    return lock["skills"][skill].get("servers", {})


def check_locked(project: Path, skill: str, servers: list[str]) -> None:
    found = sorted(locked_servers(project, skill))
    if found != sorted(servers):
        raise SystemExit(f"{project}: `{skill}` locks the servers {found}, not {servers}")


def tree_size(tree: Path) -> dict[str, int]:
    files = size = 0
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            files += 1
            size += path.stat().st_size
    return {"files": files, "bytes": size}


def prepare_main(setup: Setup) -> dict[str, Any]:
    """The project the starts load from: `everything` and `time` added (the first add with
    npm's cache empty, timed for the record), plus `plain`, the skill without servers."""
    setup.main.mkdir()
    project = setup.main / "project"
    (project / "src").mkdir(parents=True)
    for name in ("config", "cache"):
        (setup.main / name).mkdir()
    shutil.copytree(setup.sources / "everything", project / "src" / "everything")
    shutil.copytree(setup.sources / "time", project / "src" / "time")
    plain = project / "src" / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text(SKILL_BODY.format(name="plain", what="Has no servers."))
    subprocess.run(["chmod", "-R", "o+rX", str(setup.work)], check=True)
    first = {
        "npm": skillbox_add(setup, setup.main, project, "everything")[0],
        "pypi": skillbox_add(setup, setup.main, project, "time")[0],
    }
    skillbox_add(setup, setup.main, project, "plain")
    facts: dict[str, Any] = {"first_add_s": first, "trees": {}}
    for registry, server in SERVERS.items():
        check_locked(project, server["skill"], [server["server"]])
        locked = locked_servers(project, server["skill"])[server["server"]]
        tree = setup.main / "cache" / "store" / "sha256" / locked["digest"].split(":", 1)[1]
        facts["trees"][registry] = {
            "package": locked["package"], "version": locked["version"],
            "packages": len(locked["packages"]), "entry": locked["entry"], "path": str(tree),
            **tree_size(tree),
        }
    log(f"main project ready: {NPM_PACKAGE} {facts['trees']['npm']['version']},"
        f" {PYPI_PACKAGE} {facts['trees']['pypi']['version']}")
    return facts


# --- 1. starts ---------------------------------------------------------------------------------


def text_of(result: Any) -> str:
    return result.content[0].text if result.content else ""


async def start_skillbox(setup: Setup, registry: str, errlog: Any,
                         samples: dict[str, list[float]]) -> None:
    server = SERVERS[registry]
    tool, arguments = server["tool"]
    name = f"{server['server']}__{tool}"
    project = setup.main / "project"
    parameters = StdioServerParameters(
        command=setup.skillbox, args=["mcp", "--root", str(project / ".agents" / "skills")],
        env=setup.skillbox_env(setup.main), cwd=str(project),
    )
    spawned = time.perf_counter()
    async with stdio_client(parameters, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            loaded = await session.call_tool("load_skill", {"skill": server["skill"]})
            load_done = time.perf_counter()
            answer = await session.call_tool(name, arguments)
            answered = time.perf_counter()
            running = f"`{server['server']}` (skill `{server['skill']}`) is running"
            if loaded.is_error or running not in text_of(loaded):
                raise SystemExit(f"skillbox did not start the {registry} server:\n"
                                 f"{text_of(loaded)}")
            if answer.is_error or not server["answer"](text_of(answer)):
                raise SystemExit(f"skillbox: unexpected answer of {name}: {answer}")
            listed_started = time.perf_counter()
            names = [each.name for each in (await session.list_tools()).tools]
            listed = time.perf_counter()
            if name not in names:
                raise SystemExit(f"skillbox: {name} not in {names}")
            plain_started = time.perf_counter()
            plain = await session.call_tool("load_skill", {"skill": "plain"})
            plain_done = time.perf_counter()
            if plain.is_error:
                raise SystemExit(f"load_skill of plain failed: {text_of(plain)}")
    wait_no_leftovers(f"skillbox ({registry})")
    samples["spawn_initialize"].append(initialized - spawned)
    samples["load_skill"].append(load_done - initialized)
    samples["first_call"].append(answered - load_done)
    samples["load_to_answer"].append(answered - initialized)
    samples["tools_list"].append(listed - listed_started)
    samples["load_plain"].append(plain_done - plain_started)
    samples["spawn_to_answer"].append(answered - spawned)


# A console script's entry called from a tree put first on `sys.path`: what a start from the
# store runs, here outside the sandbox: `-c CODE TREE MODULE FUNCTION ARGS…`.
CONSOLE_ENTRY = """import importlib, sys
tree, module, function = sys.argv[1:4]
del sys.argv[1:4]
sys.path.insert(0, tree)
entry = importlib.import_module(module)
for name in function.split("."):
    entry = getattr(entry, name)
sys.exit(entry())
"""


def direct_parameters(setup: Setup, side: str, registry: str) -> StdioServerParameters:
    """`direct`: the skill's own line, as other agents run it; `bare`: the entry of the tree
    skillbox stored, spawned with the same interpreter and environment, no sandbox and no
    skillbox."""
    server = SERVERS[registry]
    if side == "direct":
        command = "npx" if registry == "npm" else setup.uvx
        args = list(server["line"]["args"])
    else:
        tree = setup.trees[registry]
        entry = tree["entry"]
        if registry == "npm":
            command, args = "node", [str(Path(tree["path"]) / entry["script"])]
        else:
            command = "python3"
            args = ["-I", "-B", "-c", CONSOLE_ENTRY, tree["path"], entry["module"],
                    entry["function"]]
    # The bare server gets what the sandbox gives a server (HOME and PATH), not the caller's
    # variables: `NODE_EXTRA_CA_CERTS` alone makes node parse a CA bundle at start (about 50 ms
    # here). The launchers keep them: they reach the registry.
    env = setup.environment if side == "direct" else {"HOME": str(setup.home), "PATH": PATH}
    return StdioServerParameters(command=command, args=args, env=env, cwd=str(setup.work))


async def start_direct(setup: Setup, side: str, registry: str, errlog: Any,
                       samples: dict[str, list[float]]) -> None:
    server = SERVERS[registry]
    tool, arguments = server["tool"]
    parameters = direct_parameters(setup, side, registry)
    spawned = time.perf_counter()
    async with stdio_client(parameters, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            names = [each.name for each in (await session.list_tools()).tools]
            listed = time.perf_counter()
            answer = await session.call_tool(tool, arguments)
            answered = time.perf_counter()
            if tool not in names:
                raise SystemExit(f"{side} {registry}: {tool} not in {names}")
            if answer.is_error or not server["answer"](text_of(answer)):
                raise SystemExit(f"{side} {registry}: unexpected answer of {tool}: {answer}")
    wait_no_leftovers(f"{side} ({registry})")
    samples["spawn_initialize"].append(initialized - spawned)
    samples["tools_list"].append(listed - initialized)
    samples["spawn_to_listed"].append(listed - spawned)
    samples["first_call"].append(answered - listed)
    samples["spawn_to_answer"].append(answered - spawned)


SIDES = ("skillbox", "bare", "direct")


async def start(setup: Setup, side: str, registry: str, errlog: Any,
                samples: dict[str, list[float]]) -> None:
    if side == "skillbox":
        await start_skillbox(setup, registry, errlog, samples)
    else:
        await start_direct(setup, side, registry, errlog, samples)


async def starts(setup: Setup, errlog: Any, runs: int) -> dict[str, Any]:
    names = ("spawn_initialize", "load_skill", "first_call", "load_to_answer", "tools_list",
             "spawn_to_listed", "load_plain", "spawn_to_answer")
    found = {f"{side}:{registry}": {name: [] for name in names}
             for side in SIDES for registry in SERVERS}
    # One of each first, not kept: npx's and uv's own caches (`_npx`, uv's environments) and
    # the page cache warm up.
    for registry in SERVERS:
        for side in SIDES:
            await start(setup, side, registry, errlog, {name: [] for name in names})
    for run in range(runs):
        order = [(side, registry) for registry in SERVERS for side in SIDES]
        if run % 2:
            order.reverse()
        for side, registry in order:
            await start(setup, side, registry, errlog, found[f"{side}:{registry}"])
    log(f"starts: {runs} of each")
    return found


# --- 2. adds -----------------------------------------------------------------------------------


def timed(command: list[str], folder: Path, env: dict[str, str],
          what: str) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    spent = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stdout}\n{done.stderr}")
    return spent, {}


def add_case(setup: Setup, case: str, folder: Path,
             versions: dict[str, str]) -> tuple[float, dict[str, float]]:
    folder.mkdir(parents=True)
    if case.startswith("add "):
        skill, source, servers = {
            "add both": ("clock", setup.sources / "clock", ["everything", "time"]),
            "add plain": ("clock", setup.sources / "plain" / "clock", []),
            "add npm": ("everything", setup.sources / "everything", ["everything"]),
            "add pypi": ("time", setup.sources / "time", ["time"]),
        }[case]
        project = new_project(setup, folder, source)
        spent, steps = skillbox_add(setup, folder, project, skill)
        check_locked(project, skill, servers)
        return spent, steps
    if case == "npm install":
        return timed(["npm", "install", "--omit=dev", "--ignore-scripts", "--no-bin-links",
                      "--no-audit", "--no-fund", f"{NPM_PACKAGE}@{versions['npm']}"],
                     folder, setup.environment, "npm install")
    if case == "pip install --target":
        return timed(["python3", "-m", "pip", "install", "--disable-pip-version-check",
                      "--no-input", "--quiet", "--only-binary=:all:", "--target",
                      str(folder / "tree"), f"{PYPI_PACKAGE}=={versions['pypi']}"],
                     folder, setup.environment, "pip install --target")
    if case == "uv tool install":
        env = {**setup.environment, "UV_TOOL_DIR": str(folder / "tools"),
               "UV_TOOL_BIN_DIR": str(folder / "bin")}
        return timed([setup.uv, "tool", "install", "--quiet",
                      f"{PYPI_PACKAGE}=={versions['pypi']}"], folder, env, "uv tool install")
    raise SystemExit(f"unknown case {case}")


ADD_CASES = ("add both", "add plain", "add npm", "add pypi", "npm install",
             "pip install --target", "uv tool install")


def adds(setup: Setup, runs: int, versions: dict[str, str]) -> tuple[dict[str, Any],
                                                                      dict[str, Path]]:
    """Each case `runs` times in a fresh folder, the order reversed every other round; the last
    round's folders of the skillbox cases are kept (for `verify`). Returns the times and, for
    the skillbox cases, the steps of each sample."""
    found: dict[str, list[float]] = {case: [] for case in ADD_CASES}
    steps: dict[str, list[dict[str, float]]] = {case: [] for case in ADD_CASES}
    kept: dict[str, Path] = {}
    root = setup.work / "adds"
    for run in range(runs):
        order = list(ADD_CASES) if run % 2 == 0 else list(reversed(ADD_CASES))
        for case in order:
            folder = root / f"{case.replace(' ', '-')}-{run}"
            spent, seen = add_case(setup, case, folder, versions)
            found[case].append(spent)
            steps[case].append(seen)
            if run == runs - 1 and case.startswith("add "):
                kept[case] = folder
            else:
                remove_tree(folder)
        log(f"adds: round {run + 1} of {runs}")
    return {"times": found, "steps": steps}, kept


def remove_tree(folder: Path) -> None:
    if not folder.exists():
        return
    # The store's trees are read-only: open them up before removing.
    subprocess.run(["chmod", "-R", "u+w", str(folder)], check=False)
    shutil.rmtree(folder, ignore_errors=True)


# --- 3. the digest check -----------------------------------------------------------------------


def verify(setup: Setup, kept: dict[str, Path], runs: int) -> dict[str, list[float]]:
    cases = {"npm": kept["add npm"], "pypi": kept["add pypi"], "plain": kept["add plain"],
             "both": kept["add both"]}
    found: dict[str, list[float]] = {case: [] for case in cases}

    def once(case: str) -> float:
        folder = cases[case]
        started = time.perf_counter()
        done = subprocess.run([setup.skillbox, "verify"], cwd=folder / "project",
                              env=setup.skillbox_env(folder), capture_output=True, text=True)
        spent = time.perf_counter() - started
        if done.returncode != 0 or "unchanged" not in done.stdout:
            raise SystemExit(f"skillbox verify in {folder} failed:\n{done.stdout}{done.stderr}")
        return spent

    for _ in range(VERIFY_WARMUP):
        for case in cases:
            once(case)
    for run in range(runs):
        for case in (cases if run % 2 == 0 else reversed(list(cases))):
            found[case].append(once(case))
    log(f"verify: {runs} of each")
    return found


# --- the report --------------------------------------------------------------------------------


def ms(value: float) -> str:
    return f"{value * 1000:,.0f} ms"


def med_min(values: list[float]) -> str:
    return f"{ms(median(values))} ({ms(min(values))})"


def seconds(values: list[float]) -> str:
    return f"{median(values):,.2f} s ({min(values):,.2f} s)"


def report(results: dict[str, Any]) -> str:
    settings, facts = results["settings"], results["facts"]
    trees = facts["trees"]
    s, lines = results["starts"], []
    n = settings["starts"]
    lines += [
        f"**1. `load_skill` → first answer of a package server** (median (min) of {n}; a new"
        " `skillbox mcp` per sample, initialized before the clock starts; theirs: the same"
        " client spawns the skill's own line, caches warm)",
        "",
        "| server | skillbox: `load_skill` + first `tools/call` | theirs: spawn + initialize +"
        " `tools/list` + first `tools/call` | theirs / skillbox | goal: skillbox faster |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    lines_of = {"npm": f"`npx -y {NPM_PACKAGE}`", "pypi": f"`uvx {' '.join(UVX_ARGS)}`"}
    for registry in SERVERS:
        ours = s[f"skillbox:{registry}"]["load_to_answer"]
        theirs = s[f"direct:{registry}"]["spawn_to_answer"]
        ratio = median(theirs) / median(ours)
        tree = trees[registry]
        lines.append(
            f"| `{tree['package']}` {tree['version']} | {med_min(ours)} | {lines_of[registry]}:"
            f" {med_min(theirs)} | **{ratio:.2f}x** | {'met' if ratio > 1 else 'missed'} |"
        )
    lines += [
        "",
        "Where the time goes (medians). *bare*: the client spawns the entry of the tree skillbox"
        " stored (`node …/dist/index.js`; `python3 -I -B -c` calling `mcp_server_time.main`"
        " with the tree first on `sys.path`) with only `HOME` and `PATH` set, as in the"
        " sandbox; no skillbox, no sandbox: the server's own start.",
        "",
        "| step | npm: skillbox | npm: bare | npm: `npx` | PyPI: skillbox | PyPI: bare |"
        " PyPI: `uvx` |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cell(side: str, registry: str, name: str | None) -> str:
        values = s[f"{side}:{registry}"].get(name or "", [])
        return ms(median(values)) if values else ""

    rows = (
        ("spawn → initialize answer (skillbox: `skillbox mcp` itself, before the clock)",
         "spawn_initialize", "spawn_initialize"),
        ("`load_skill`: digest check, sandbox, the server's initialize and `tools/list`",
         "load_skill", None),
        ("spawn → initialize → `tools/list` answered", None, "spawn_to_listed"),
        ("first `tools/call`", "first_call", "first_call"),
        ("**timed**: skillbox `load_skill` → answer; others spawn → answer", "load_to_answer",
         "spawn_to_answer"),
        ("skillbox's `load_skill` less bare spawn → `tools/list` (what skillbox adds)", "extra",
         None),
        ("of which the digest check (part 3: `verify` less the project without servers)",
         "digest", None),
        ("`tools/list` after the load (skillbox, not timed)", "tools_list", None),
        ("for scale: `load_skill` of a skill without servers", "load_plain", None),
    )
    for label, ours, theirs in rows:
        cells = []
        for registry in SERVERS:
            if ours == "extra":
                added = median(s[f"skillbox:{registry}"]["load_skill"]) \
                    - median(s[f"bare:{registry}"]["spawn_to_listed"])
                cells += [f"{added * 1000:+,.0f} ms", "", ""]
                continue
            if ours == "digest":
                v = results["verify"]
                cells += [f"{ms(median(v[registry]) - median(v['plain']))}", "", ""]
                continue
            cells.append(cell("skillbox", registry, ours))
            cells.append(cell("bare", registry, theirs))
            cells.append(cell("direct", registry, theirs))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    a, runs = results["adds"]["times"], settings["adds"]
    both, plain = median(a["add both"]), median(a["add plain"])
    lines += [
        "",
        f"**2. What `add` pays to provision** (median (min) of {runs}; each in a fresh folder,"
        " skillbox's store empty, npm's cache warm)",
        "",
        "| command | time | less `add` without servers |",
        "| --- | ---: | ---: |",
    ]
    labels = {
        "add both": "`skillbox add` of the skill with both servers",
        "add plain": "`skillbox add` of the same skill without `.mcp.json`",
        "add npm": "`skillbox add` of a skill with the npm server alone",
        "add pypi": "`skillbox add` of a skill with the PyPI server alone",
        "npm install": "reference: `npm install --omit=dev --ignore-scripts --no-bin-links"
                       f" {NPM_PACKAGE}@{trees['npm']['version']}` (npm's cache warm)",
        "pip install --target": "reference: `python3 -m pip install --only-binary=:all:"
                                f" --target DIR {PYPI_PACKAGE}=={trees['pypi']['version']}`",
        "uv tool install": f"reference: `uv tool install {PYPI_PACKAGE}=="
                           f"{trees['pypi']['version']}` (uv's cache warm)",
    }
    for case in ADD_CASES:
        extra = f"+{median(a[case]) - plain:,.2f} s" \
            if case.startswith("add ") and case != "add plain" else ""
        lines.append(f"| {labels[case]} | {seconds(a[case])} | {extra} |")
    lines.append("| **the provisioning cost**: `add` with both servers less `add` without |"
                 f" **{both - plain:,.2f} s** | |")
    first = facts["first_add_s"]
    lines.append("| for the record: the run's first `add` of each (npm's cache empty) |"
                 f" npm {first['npm']:,.2f} s, PyPI {first['pypi']:,.2f} s | |")

    steps = results["adds"]["steps"]
    lines += [
        "",
        "Where `add`'s time goes (median seconds; the registry tools `add` ran, seen as its"
        " child processes every 10 ms, side by side when a skill has several servers;"
        " *skillbox itself* is the time no tool ran: reading the skill,"
        " digesting and storing the trees, the lock)",
        "",
        "| step | both servers | npm alone | PyPI alone |",
        "| --- | ---: | ---: | ---: |",
    ]
    cases = ("add both", "add npm", "add pypi")
    names: list[str] = []
    for case in cases:
        for sample in steps[case]:
            names += [name for name in sample if name not in names]
    names.sort(key=lambda name: name.startswith("skillbox itself"))
    for name in names:
        cells = []
        for case in cases:
            values = [sample.get(name, 0.0) for sample in steps[case]]
            cells.append(f"{median(values):,.2f}" if any(values) else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    v = results["verify"]
    lines += [
        "",
        f"**3. The digest check at each start** (`skillbox verify`, median (min) of"
        f" {settings['verify']}; it digests the installed skill and each stored tree the way a"
        " start does)",
        "",
        "| project (the last `add` round's) | stored trees | `skillbox verify` | less the"
        " project without servers |",
        "| --- | --- | ---: | ---: |",
    ]

    def described(registry: str) -> str:
        t = trees[registry]
        return f"{t['files']:,} files, {t['bytes'] / 1e6:,.1f} MB ({t['packages']} packages)"

    for case, tree in (("plain", "none"), ("npm", described("npm")),
                       ("pypi", described("pypi")), ("both", "both")):
        extra = "" if case == "plain" else f"+{ms(median(v[case]) - median(v['plain']))}"
        lines.append(f"| {case} | {tree} | {med_min(v[case])} | {extra} |")
    lines.append("")
    lines.append("- tools: " + ", ".join(facts["tools"].values()))
    lines.append(f"- leftover processes at the end: {facts['leftovers']}")
    return "\n".join(lines) + "\n"


def tool_versions(setup: Setup) -> dict[str, str]:
    def version(name: str, command: list[str]) -> str:
        done = subprocess.run(command, env=setup.environment, capture_output=True, text=True)
        said = (done.stdout or done.stderr).strip().splitlines()
        found = said[0].split(" from ")[0].split(" (")[0] if done.returncode == 0 and said \
            else "?"
        return found if found.lower().startswith(name.lower()) else f"{name} {found}"
    return {
        "skillbox": version("skillbox", [setup.skillbox, "--version"]),
        "node": version("node", ["node", "--version"]),
        "npm": version("npm", ["npm", "--version"]),
        "python3": version("Python", ["python3", "--version"]),
        "pip": version("pip", ["python3", "-m", "pip", "--version"]),
        "uv": version("uv", [setup.uv, "--version"]),
    }


async def measure(arguments: argparse.Namespace) -> None:
    out = arguments.out.resolve()
    work = out / "package-servers-work"
    remove_tree(work)
    work.mkdir(parents=True)
    become_subreaper()
    setup = Setup(arguments, work)
    setup.home.mkdir()
    write_sources(setup)
    settings = {"starts": arguments.starts, "adds": arguments.adds, "verify": arguments.verify}
    results: dict[str, Any] = {"settings": settings}
    facts = prepare_main(setup)
    setup.trees = facts["trees"]
    facts["tools"] = tool_versions(setup)
    results["facts"] = facts
    with open(work / "stderr.log", "w") as errlog:
        results["starts"] = await starts(setup, errlog, arguments.starts)
    versions = {registry: facts["trees"][registry]["version"] for registry in SERVERS}
    results["adds"], kept = adds(setup, arguments.adds, versions)
    results["verify"] = verify(setup, kept, arguments.verify)
    left = leftovers()
    facts["leftovers"] = "none" if not left else ", ".join(map(str, left))
    table = report(results)

    def raw(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: raw(inner) for key, inner in value.items()}
        if isinstance(value, list) and value and isinstance(value[0], float):
            return [round(each * 1000, 3) for each in value]
        return value

    (out / "package-servers-results.md").write_text(table)
    (out / "package-servers-results.json").write_text(
        json.dumps({"times_in_ms": True, **raw(results)}, indent=2) + "\n")
    print(table, end="")
    if left:
        raise SystemExit(f"processes left after the run: {left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="mode", required=True)
    measuring = commands.add_parser("measure")
    measuring.add_argument("--skillbox", type=Path, required=True)
    measuring.add_argument("--uv", type=Path, required=True)
    measuring.add_argument("--uvx", type=Path, required=True)
    measuring.add_argument("--starts", type=int, default=10)
    measuring.add_argument("--adds", type=int, default=3)
    measuring.add_argument("--verify", type=int, default=20)
    measuring.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    for name in ("skillbox", "uv", "uvx"):
        setattr(arguments, name, getattr(arguments, name).resolve())
    asyncio.run(measure(arguments))


if __name__ == "__main__":
    main()
