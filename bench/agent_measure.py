#!/usr/bin/env python3
"""The scripted model server and the bare-HTTP peer client of `bench/agent.sh`.

    agent_measure.py serve --skill NAME --port-file FILE --record-dir DIR
    agent_measure.py client --url BASE_URL --bodies FILE [--times-out FILE]
    agent_measure.py check --events FILE --rounds N
    agent_measure.py report --results FILE --rounds-low 1 --rounds-high 10 --catalog NAME \
        --loop-times-dir DIR

`serve` answers Chat Completions requests on 127.0.0.1 (port 0; the port goes to FILE) with
canned server-sent events. The base URL's first path segment gives the script: under
`/n{N}` the request whose conversation already holds k tool results gets, while k < N, one
`load_skill` call of NAME with arguments `{"skill": NAME, "arguments": "round k"}` (they
differ every round so the loop's repeated-call guard stays out of the way), and then a text
answer. The answer depends only on the request, so one server serves every run. Under
`/rec/n{N}` it does the same and also writes the bodies it received to `DIR/bodies-n{N}.json`
once the answer is sent: the peer replays exactly those bytes. Each response is written in one
`send` with a `Content-Length`, so connections stay alive and Nagle's algorithm adds no delay.

`client` is the peer: `requests` (one `Session`, so one kept-alive connection) POSTs each
recorded body in order, reads the stream line by line and parses each `data:` event as JSON,
the least any client does. It checks the last answer is text and the others tool calls.

`client --times-out FILE` also appends the seconds its request loop took (interpreter start and
imports excluded) to FILE; `bench/agent.sh` keeps only the timed runs' lines.

`check` reads `skillbox ask --json` output and checks N successful `load_skill` results and an
answered turn. `report` turns hyperfine's JSON export and the client's loop times into the
markdown table: per round = (median at N=high - median at N=low) / (high - low).
"""

import argparse
import http.server
import json
import os
import statistics
import sys
import threading
import time

ROUND_MARKER = b'"role":"tool"'


def sse(chunks):
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def tool_call_events(skill, round_index):
    arguments = json.dumps({"skill": skill, "arguments": f"round {round_index}"})
    call = {
        "index": 0,
        "id": f"call_{round_index}",
        "type": "function",
        "function": {"name": "load_skill", "arguments": arguments},
    }
    return sse([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    ])


def answer_events():
    return sse([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 1}},
    ])


def serve(options):
    recorded = {}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *_):
            pass

        def reply(self, status, content_type, body):
            head = (
                f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                f"Content-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\n"
                "Connection: keep-alive\r\n\r\n"
            ).encode()
            self.wfile.write(head + body)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            parts = self.path.strip("/").split("/")
            record = parts[0] == "rec"
            if record:
                parts = parts[1:]
            if len(parts) != 3 or not parts[0].startswith("n") or parts[1:] != ["chat", "completions"]:
                self.reply(404, "application/json", b'{"error":{"message":"use /n{N}/chat/completions"}}')
                return
            rounds = int(parts[0][1:])
            done = body.count(ROUND_MARKER)
            events = tool_call_events(options.skill, done) if done < rounds else answer_events()
            if record:
                with lock:
                    bodies = recorded.setdefault(rounds, [])
                    if done == 0:
                        bodies.clear()
                    bodies.append(body.decode())
                    if done >= rounds:
                        path = os.path.join(options.record_dir, f"bodies-n{rounds}.json")
                        with open(path, "w") as handle:
                            json.dump(bodies, handle)
            self.reply(200, "text/event-stream", events)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(options.port_file + ".tmp", "w") as handle:
        handle.write(str(server.server_address[1]))
    os.replace(options.port_file + ".tmp", options.port_file)
    server.serve_forever()


def post_with_requests(url, bodies):
    """Each body POSTed on one kept-alive `requests` session; yields each response's lines."""
    import requests

    with requests.Session() as session:
        for body in bodies:
            response = session.post(
                url,
                data=body.encode(),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
                stream=True,
            )
            response.raise_for_status()
            yield response.iter_lines()


def post_with_http_client(url, bodies):
    """The same with the standard library's `http.client` on one connection."""
    import http.client
    import urllib.parse

    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port)
    try:
        for body in bodies:
            connection.request("POST", parsed.path, body=body.encode(), headers={
                "Content-Type": "application/json", "Accept": "text/event-stream"})
            response = connection.getresponse()
            if response.status != 200:
                sys.exit(f"client: HTTP {response.status}")
            yield response.read().split(b"\n")
    finally:
        connection.close()


def client(options):
    with open(options.bodies) as handle:
        bodies = json.load(handle)
    endpoint = options.url.rstrip("/") + "/chat/completions"
    post = post_with_http_client if options.library == "http.client" else post_with_requests
    started = time.perf_counter()
    for index, lines in enumerate(post(endpoint, bodies)):
        text, calls = "", []
        for line in lines:
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"]
            text += delta.get("content") or ""
            calls.extend(delta.get("tool_calls") or [])
        last = index == len(bodies) - 1
        if (last and (calls or text != "done")) or (not last and len(calls) != 1):
            sys.exit(f"client: request {index} got text {text!r} and {len(calls)} calls")
    if options.times_out:
        with open(options.times_out, "a") as handle:
            handle.write(f"{time.perf_counter() - started}\n")


def check(options):
    with open(options.events) as handle:
        events = [json.loads(line) for line in handle if line.strip()]
    finished = [event for event in events if event.get("type") == "tool_call_finished"]
    final = [event for event in events if event.get("type") == "final"]
    problems = []
    if len(finished) != options.rounds:
        problems.append(f"{len(finished)} tool results, not {options.rounds}")
    if any(event["name"] != "load_skill" or event["is_error"] for event in finished):
        problems.append("a tool result is not a successful load_skill: "
                        + json.dumps([event["result"][:200] for event in finished if event["is_error"]]))
    if not final or final[-1].get("end") != "answered" or final[-1].get("text") != "done":
        problems.append(f"the turn did not end answered with `done`: {final[-1:] }")
    if problems:
        sys.exit("check: " + "; ".join(problems))


PEERS = {
    "requests": "bare HTTP: Python `requests` (one session) replaying the same bodies",
    "http.client": "bare HTTP: Python's `http.client` (one connection), the same bodies",
}


def report(options):
    results = {}
    for path in options.results:
        with open(path) as handle:
            for entry in json.load(handle)["results"]:
                results.setdefault(entry["command"], {"times": []})["times"].extend(entry["times"])
    low, high = options.rounds_low, options.rounds_high
    runs = len(results[f"skillbox n{low}"]["times"])

    def whole_ms(name):
        return statistics.median(results[name]["times"]) * 1000.0

    def loop_ms(peer, rounds):
        path = os.path.join(options.loop_times_dir, f"agent-loop-{peer}-n{rounds}.txt")
        with open(path) as handle:
            times = [float(line) for line in handle if line.strip()]
        return statistics.median(times) * 1000.0

    def per_round(first, last):
        return (last - first) / (high - low)

    rows = [(f"`skillbox ask --json` ({options.catalog}), whole process",
             whole_ms(f"skillbox n{low}"), whole_ms(f"skillbox n{high}"))]
    if options.before:
        rows.append((f"the same with `{options.before}`, whole process",
                     whole_ms(f"before n{low}"), whole_ms(f"before n{high}")))
    for peer, label in PEERS.items():
        rows.append((f"{label}, whole process", whole_ms(f"{peer} n{low}"), whole_ms(f"{peer} n{high}")))
        rows.append((f"{label}, its request loop alone (timed inside Python)",
                     loop_ms(peer, low), loop_ms(peer, high)))
    print(f"| measure | N={low} median ms | N={high} median ms | per round ms |")
    print("| --- | ---: | ---: | ---: |")
    for label, first, last in rows:
        print(f"| {label} | {first:.2f} | {last:.2f} | {per_round(first, last):.3f} |")
    skillbox_round = per_round(rows[0][1], rows[0][2])
    ratios = {}
    for peer in PEERS:
        label = f"{PEERS[peer]}, its request loop alone (timed inside Python)"
        peer_round = next(per_round(first, last) for name, first, last in rows if name == label)
        ratios[peer] = skillbox_round / peer_round
        print(f"\nskillbox per round / `{peer}` request loop per round: **{ratios[peer]:.2f}x** "
              f"(skillbox {skillbox_round - peer_round:+.3f} ms per round).")
    if options.before:
        before_round = per_round(rows[1][1], rows[1][2])
        ratios["before"] = before_round / skillbox_round
        print(f"\n`{options.before}` per round / skillbox per round: **{ratios['before']:.2f}x**.")
    print(f"\nRuns per command: {runs}.")
    print(json.dumps({
        "catalog": options.catalog,
        "rows": [{"measure": label, "n_low_ms": first, "n_high_ms": last,
                  "per_round_ms": per_round(first, last)} for label, first, last in rows],
        "ratios": ratios,
    }))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve")
    serve_parser.add_argument("--skill", required=True)
    serve_parser.add_argument("--port-file", required=True)
    serve_parser.add_argument("--record-dir", required=True)
    client_parser = commands.add_parser("client")
    client_parser.add_argument("--url", required=True)
    client_parser.add_argument("--bodies", required=True)
    client_parser.add_argument("--times-out", help="append the seconds the requests took to this file")
    client_parser.add_argument("--library", choices=["requests", "http.client"], default="requests")
    check_parser = commands.add_parser("check")
    check_parser.add_argument("--events", required=True)
    check_parser.add_argument("--rounds", type=int, required=True)
    report_parser = commands.add_parser("report")
    report_parser.add_argument("--results", required=True, action="append",
                               help="a hyperfine JSON export (repeat to pool batches)")
    report_parser.add_argument("--rounds-low", type=int, required=True)
    report_parser.add_argument("--rounds-high", type=int, required=True)
    report_parser.add_argument("--catalog", required=True)
    report_parser.add_argument("--loop-times-dir", required=True)
    report_parser.add_argument("--before", help="the other skillbox binary timed as `before`")
    options = parser.parse_args()
    {"serve": serve, "client": client, "check": check, "report": report}[options.command](options)


if __name__ == "__main__":
    main()
