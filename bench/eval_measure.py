#!/usr/bin/env python3
"""Helpers of bench/eval.sh.

serve      a Chat Completions server that answers at once (no model time), so a timed
           `skillbox eval` against it is all eval overhead: a request about counting or slugs
           calls the matching text-tools tool, a tool result gets a short answer, a grading
           request a passing verdict, anything else a short answer.
summarize  the markdown table of a run, from the reports and hyperfine's JSON.
"""
import argparse
import http.server
import json
import sys
import threading


def reply(body):
    messages = body.get("messages", [])
    system = messages[0].get("content", "") if messages and messages[0].get("role") == "system" else ""
    last = messages[-1] if messages else {}
    if "You grade one expectation" in system:
        return {"role": "assistant", "content": '{"passed": true, "evidence": "bench"}'}
    if "You improve the description" in system:
        return {"role": "assistant", "content": "<description>Counts words and makes slugs.</description>"}
    if last.get("role") == "tool":
        return {"role": "assistant", "content": "Done: " + str(last.get("content", ""))[:80]}
    text = str(last.get("content", ""))
    offered = {tool["function"]["name"] for tool in body.get("tools", [])}
    lower = text.lower()
    for words, tool, arguments in (
        (("word", "characters", "sentences"), "count_words", {"text": text[-200:]}),
        (("slug",), "slugify", {"text": text[-60:]}),
    ):
        if tool in offered and any(word in lower for word in words):
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(arguments)},
                }],
            }
    return {"role": "assistant", "content": "A short answer."}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle on, each kept-alive response would wait
    # for the client's delayed ACK (40 ms), which is no cost of the eval.
    disable_nagle_algorithm = True

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        message = reply(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        payload = json.dumps({
            "id": "bench",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def serve(arguments):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(arguments.port_file, "w") as file:
        file.write(str(server.server_address[1]))
    server.serve_forever()


def units(report):
    """Trigger runs and task runs in a report."""
    count = 0
    for skill in report["skills"]:
        for query in (skill.get("triggers") or {}).get("queries", []):
            count += len(query["runs"])
        count += len((skill.get("tasks") or {}).get("runs", []))
    return count


def summarize(arguments):
    scripted = json.load(open(arguments.scripted_report))
    scripted_runs = json.load(open(arguments.scripted_hyperfine))["results"][0]["times"]
    cold = json.load(open(arguments.cold_report))
    warm_runs = json.load(open(arguments.warm_hyperfine))["results"][0]["times"]
    cold_wall = arguments.cold_wall
    median = lambda values: sorted(values)[len(values) // 2]
    scripted_units = units(scripted)
    cold_units = units(cold)
    model_s = cold["cache"]["model_ms"] / 1000
    rows = [
        "| case | runs (queries, tasks) | whole command | model time | eval's own time per run |",
        "|---|---:|---:|---:|---:|",
        "| scripted model answering at once, `--no-cache` (median of %d) | %d | %.0f ms | %.0f ms | **%.1f ms** |" % (
            len(scripted_runs), scripted_units, median(scripted_runs) * 1000,
            scripted["cache"]["model_ms"], (median(scripted_runs) * 1000 - scripted["cache"]["model_ms"]) / scripted_units),
        "| local Qwen2.5-Coder-1.5B, empty cache (one run) | %d | %.1f s | %.1f s | **%.0f ms** |" % (
            cold_units, cold_wall, model_s, (cold_wall - model_s) * 1000 / cold_units),
    ]
    warm = median(warm_runs)
    rows += [
        "",
        "| re-run with the same inputs | whole command | model requests | speed-up |",
        "|---|---:|---:|---:|",
        "| empty cache (one run) | %.1f s | %d | 1x |" % (cold_wall, cold["cache"]["misses"]),
        "| every answer from the cache (median of %d) | %.0f ms | 0 | **%.0fx** |" % (
            len(warm_runs), warm * 1000, cold_wall / warm),
    ]
    print("\n".join(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve")
    serve_parser.add_argument("--port-file", required=True)
    summary = commands.add_parser("summarize")
    summary.add_argument("--scripted-report", required=True)
    summary.add_argument("--scripted-hyperfine", required=True)
    summary.add_argument("--cold-report", required=True)
    summary.add_argument("--cold-wall", type=float, required=True)
    summary.add_argument("--warm-hyperfine", required=True)
    arguments = parser.parse_args()
    {"serve": serve, "summarize": summarize}[arguments.command](arguments)


if __name__ == "__main__":
    sys.exit(main())
