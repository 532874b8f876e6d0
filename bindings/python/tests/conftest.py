"""What the binding's tests share: skill folders written for each test, and a scripted
OpenAI-compatible model server on 127.0.0.1 (a free port) that loads a skill, runs its
script and answers with what the script printed."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


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
