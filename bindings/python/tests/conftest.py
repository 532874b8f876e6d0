"""What the binding's tests share: skill folders written for each test, a scripted
OpenAI-compatible model server on 127.0.0.1 (a free port) that loads a skill, runs its
script and answers with what the script printed, and the local model (llama-server with
Qwen2.5-Coder-1.5B-Instruct, as ``scripts/setup-local-llm.sh`` provisions it)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]


def write_skills(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root``, readable by the sandbox users."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder, _, names in os.walk(root):
        os.chmod(folder, 0o755)
        for name in names:
            os.chmod(Path(folder) / name, 0o644)
    return root


PROBE_SKILL = """---
name: probe
description: Multiplies two numbers and probes the sandbox it runs in.
---
# Probe

Run `scripts/multiply.py A B` to multiply A by B.
"""


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """A root holding the skill ``probe`` with scripts that multiply, sleep, shout and probe."""
    root = tmp_path / "skills"
    root.mkdir()
    os.chmod(tmp_path, 0o755)
    return write_skills(
        root,
        {
            "probe/SKILL.md": PROBE_SKILL,
            "probe/scripts/multiply.py": "import sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
            "probe/scripts/sleep.py": "import sys, time\ntime.sleep(float(sys.argv[1]))\nprint('slept')\n",
            "probe/scripts/loud.py": "print('y' * 100000)\n",
            "probe/scripts/fail.py": "import sys\nprint('bad', file=sys.stderr)\nsys.exit(3)\n",
            "probe/scripts/probe.py": (
                "import os, socket, sys\n"
                "print('uid', os.getuid())\n"
                "try:\n    open(sys.argv[1], 'w').write('x'); print('wrote')\n"
                "except OSError as error:\n    print('no write', type(error).__name__)\n"
                "try:\n    socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=2); print('network')\n"
                "except OSError as error:\n    print('no network', type(error).__name__)\n"
                "try:\n    open('/etc/shadow').read(); print('read shadow')\n"
                "except OSError as error:\n    print('no shadow', type(error).__name__)\n"
            ),
            "outside.py": "print('outside the skill')\n",
        },
    )


class ScriptedModel:
    """A Chat Completions server that plays one agent run: load ``probe``, run
    ``scripts/multiply.py 6 7``, then answer with the script's stdout. It decides each step by
    the tool results the request carries, and keeps every request for the test to read."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", "0"))
                request = json.loads(self.rfile.read(length))
                model.requests.append(request)
                body = json.dumps(model.reply(request)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def tool_results(self, request: dict) -> list[str]:
        return [m.get("content") or "" for m in request["messages"] if m.get("role") == "tool"]

    def reply(self, request: dict) -> dict:
        results = self.tool_results(request)
        if len(results) == 0:
            return self.call("load_skill", {"skill": "probe"})
        if len(results) == 1:
            return self.call("use_skill", {"skill": "probe", "script": "scripts/multiply.py", "args": ["6", "7"]})
        ran = json.loads(results[-1]) if results[-1].startswith("{") else {}
        return self.message(f"The product is {str(ran.get('stdout', '?')).strip()}.")

    def envelope(self, message: dict, finish: str) -> dict:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def call(self, name: str, arguments: dict) -> dict:
        call = {
            "id": f"call_{len(self.requests)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return self.envelope({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    def message(self, text: str) -> dict:
        return self.envelope({"role": "assistant", "content": text}, "stop")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted_model():
    model = ScriptedModel()
    yield model
    model.close()


# The local model, as the Rust tests run it (crates/skillbox-testkit/src/local_model.rs).
LOCAL_MODEL_STARTUP_SECONDS = 180
LOCAL_MODEL_SERVER_ARGUMENTS = ["--jinja", "-c", "8192", "-t", "2", "-np", "1"]
# Starts the program in the background and kills it once this process's end of the pipe on
# its stdin closes, so the server goes with pytest however pytest ends.
GUARDED = 'program="$1"; shift; "$program" "$@" >"$LOG" 2>&1 & pid=$!; cat >/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null'


def provision_local_model() -> dict[str, str] | None:
    """``LLAMA_SERVER`` and ``MODEL`` from ``scripts/setup-local-llm.sh 1.5b`` (which installs
    them on first use, a no-op afterwards); ``None`` when it fails or
    ``SKILLBOX_SKIP_LOCAL_MODEL`` is set."""
    if "SKILLBOX_SKIP_LOCAL_MODEL" in os.environ:
        return None
    try:
        done = subprocess.run(
            ["bash", str(REPOSITORY / "scripts" / "setup-local-llm.sh"), "1.5b"],
            stdout=subprocess.PIPE,
            text=True,
        )
    except OSError:
        return None
    paths = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    if done.returncode != 0 or not {"LLAMA_SERVER", "MODEL"} <= paths.keys():
        return None
    return paths


def answers_health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


class LocalModel:
    """A running llama-server: ``base_url`` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, paths: dict[str, str], log: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.log = log
        self.process = subprocess.Popen(
            ["bash", "-c", GUARDED, "guarded", paths["LLAMA_SERVER"], "-m", paths["MODEL"]]
            + LOCAL_MODEL_SERVER_ARGUMENTS
            + ["--host", "127.0.0.1", "--port", str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "LOG": str(log)},
        )
        deadline = time.monotonic() + LOCAL_MODEL_STARTUP_SECONDS
        while not answers_health(port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                pytest.fail(
                    f"llama-server did not answer /health within {LOCAL_MODEL_STARTUP_SECONDS} s; "
                    f"its log: {log.read_text(errors='replace') if log.exists() else '(none)'}"
                )
            time.sleep(0.25)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="session")
def local_model(tmp_path_factory):
    """The local model, started once for the session. Skipped with a note when it cannot be
    provisioned, unless ``SKILLBOX_REQUIRE_LOCAL_MODEL`` is set (CI): then it fails."""
    paths = provision_local_model()
    if paths is None:
        if "SKILLBOX_REQUIRE_LOCAL_MODEL" in os.environ:
            pytest.fail(
                "SKILLBOX_REQUIRE_LOCAL_MODEL is set but the local model could not be set up: "
                "run scripts/setup-local-llm.sh to see why"
            )
        pytest.skip(
            "the local model is missing (scripts/setup-local-llm.sh failed or SKILLBOX_SKIP_LOCAL_MODEL is set)"
        )
    model = LocalModel(paths, tmp_path_factory.mktemp("local-model") / "llama-server.log")
    yield model
    model.close()
