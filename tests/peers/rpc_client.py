"""Drive a skillbox server with the `requests` library, as an independent HTTP/JSON-RPC client.

Usage: rpc_client.py URL
Prints one JSON object: {"checks": [...names that passed...], "failures": [...messages...]}.
"""
import json
import sys

import requests


def main():
    url = sys.argv[1]
    session = requests.Session()
    checks, failures = [], []

    def check(name, condition, detail=""):
        (checks if condition else failures).append(name if condition else f"{name}: {detail}")

    def call(method, params=None, request_id=1):
        body = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        response = session.post(url, json=body, timeout=30)
        return response.status_code, response.json()

    status, body = call("list_skills", {"detail": "summary"}, "py-1")
    names = [skill["name"] for skill in body.get("result", {}).get("skills", [])]
    check("list_skills", status == 200 and body.get("id") == "py-1" and "csv-insights" in names, body)

    status, body = call("describe_skill", {"name": "text.stats", "version": "0.9.0"})
    check("describe_skill version", body.get("result", {}).get("skill", {}).get("manifest", {}).get("version") == "0.9.0", body)

    status, body = call("describe_skill", {})
    check("invalid params", body.get("error", {}).get("code") == -32602, body)

    response = session.post(url, data="{broken", headers={"content-type": "application/json"}, timeout=30)
    parsed = response.json()
    check("parse error", parsed.get("error", {}).get("code") == -32700 and parsed.get("id") is None, parsed)

    response = session.post(url, json={"jsonrpc": "2.0", "method": "list_skills"}, timeout=30)
    check("notification", response.status_code == 204 and response.content == b"", response.status_code)

    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "load_skills_protocol_guide"},
        {"jsonrpc": "2.0", "method": "list_skills"},
        {"jsonrpc": "2.0", "id": 2, "method": "nope"},
    ]
    replies = session.post(url, json=batch, timeout=30).json()
    check("batch", [reply.get("id") for reply in replies] == [1, 2] and replies[1]["error"]["code"] == -32601, replies)

    text = "héllo from python\n" * 1000
    status, body = call("create_blob", {"content": text, "kind": "text/plain"})
    blob_id = body.get("result", {}).get("blob_id", "")
    check("create_blob", blob_id.startswith("blob:") and body["result"]["size_bytes"] == len(text.encode()), body)
    status, body = call("read_blob", {"blob_id": blob_id, "mode": "full"})
    check("read_blob full", body.get("result", {}).get("preview") == text, str(body)[:200])
    status, body = call("read_blob", {"blob_id": blob_id, "mode": "sample_tail", "max_bytes": 18})
    check("read_blob tail", body.get("result", {}).get("preview") == "from python\n" or body.get("result", {}).get("preview", "").endswith("python\n"), body)

    status, body = call("execute_skill", {"name": "text.stats", "args": {"text": "One two. Three!"}})
    run = body.get("result", {})
    check("execute_skill", run.get("status") == "completed" and run.get("output", {}).get("words") == 3
          and run.get("run_id", "").startswith("run_"), body)

    code = "import runtime\ndef main(args):\n    return runtime.blobs.read_text(args['blob']).count('python')\n"
    status, body = call("run_code", {"language": "python", "code": code, "args": {"blob": blob_id},
                                     "input_blobs": [blob_id]})
    check("run_code with a blob", body.get("result", {}).get("output") == 1000, body)

    status, body = call("run_code", {"language": "python", "code": "def main(args):\n    raise KeyError('k')\n"})
    run = body.get("result", {})
    check("run_code failure", run.get("status") == "failed" and run.get("error", {}).get("type") == "KeyError", body)

    print(json.dumps({"checks": checks, "failures": failures}))


if __name__ == "__main__":
    main()
