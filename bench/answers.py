#!/usr/bin/env python3
"""Small requests that ask `skillbox serve` for large answers: what they cost the server.

    SKILLBOX_BIN=target/debug/skillbox python3 bench/answers.py

A fresh `skillbox serve examples/skills` (sandbox off) is started on a port-0 loopback address
and a blob of 16 MiB of random bytes is created. Then:
  batch    one batch of ten `read_blob` calls with `mode: "full"` on that blob (a 1.3 KB
           body): the answer, and the server's peak RSS (VmHWM, reset after the blob was
           created, through /proc/PID/clear_refs) while answering it
  readers  thirty connections each ask for the whole blob and never read the answer: the
           server's RSS 10 s later, and how many of the connections the server still keeps
           open 45 s later (its send-stall timeout is 30 s)

Environment: SKILLBOX_BIN, the binary to measure (default: target/debug/skillbox, not built
here). Results: a markdown table on stdout and the raw numbers in bench/out/answers-results.json.
All traffic goes to 127.0.0.1.
"""
import base64, json, os, socket, tempfile, time, urllib.request

from serve_process import start_serve, status_number

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(repo)
binary = os.environ.get("SKILLBOX_BIN", "target/debug/skillbox")
if not os.access(binary, os.X_OK):
    raise SystemExit(f"answers-bench: no executable skillbox at {binary}; build it or set SKILLBOX_BIN")
os.makedirs("bench/out", exist_ok=True)


def call(url, body):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return response.read()


data = tempfile.mkdtemp(prefix="skillbox-answers-")
server, url = start_serve(binary, ["examples/skills", "--listen", "127.0.0.1:0", "--data-dir", data,
                                   "--sandbox", "off"])
port = int(url.split(":")[2].split("/")[0])
try:
    content = base64.b64encode(os.urandom(16 * 1024 * 1024)).decode()
    created = json.loads(call(url, {"jsonrpc": "2.0", "id": 0, "method": "create_blob", "params": {
        "content": content, "kind": "application/octet-stream", "encoding": "base64"}}))
    blob_id = created["result"]["blob_id"]
    read = {"jsonrpc": "2.0", "method": "read_blob", "params": {"blob_id": blob_id, "mode": "full"}}
    idle_kib = status_number(server.pid, "VmRSS")
    # Forget the peak of creating the blob: VmHWM is reset to the current RSS.
    with open(f"/proc/{server.pid}/clear_refs", "w") as clear:
        clear.write("5")

    batch = [dict(read, id=number) for number in range(10)]
    answers = json.loads(call(url, batch))
    results = {"binary": binary, "idle_rss_kib": idle_kib, "batch": {
        "request_bytes": len(json.dumps(batch)),
        "answered": sum("result" in answer for answer in answers),
        "refused": sum("error" in answer for answer in answers),
        "peak_rss_kib": status_number(server.pid, "VmHWM")}}

    body = json.dumps(dict(read, id=1)).encode()
    request = (b"POST /rpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    readers = []
    for _ in range(30):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.connect(("127.0.0.1", port))
        reader.sendall(request)
        readers.append(reader)
    time.sleep(10)
    rss_kib = status_number(server.pid, "VmRSS")
    time.sleep(35)
    with open("/proc/net/tcp") as table:
        open_now = sum(1 for line in table.readlines()[1:]
                       if int(line.split()[1].split(":")[1], 16) == port and line.split()[3] == "01")
    results["readers"] = {"connections": len(readers), "rss_after_10s_kib": rss_kib,
                          "open_after_45s": open_now}
    for reader in readers:
        reader.close()
finally:
    server.kill()
    server.wait()

json.dump(results, open("bench/out/answers-results.json", "w"), indent=1)
batch = results["batch"]
readers = results["readers"]
print("| case | outcome | server memory |\n|---|---|---:|")
print(f"| batch of ten full reads ({batch['request_bytes']} B) | {batch['answered']} answered, "
      f"{batch['refused']} refused | peak {batch['peak_rss_kib'] / 1024:.0f} MiB |")
print(f"| {readers['connections']} clients that never read | {readers['open_after_45s']} connections "
      f"still open after 45 s | {readers['rss_after_10s_kib'] / 1024:.0f} MiB after 10 s |")
print(f"(idle: {idle_kib / 1024:.0f} MiB)")
