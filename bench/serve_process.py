"""What the bench scripts share about a `skillbox serve` process: starting it on a port-0
address and waiting for the address it announces, and reading numbers and process trees from
/proc.

Imported by scripts run as `python3 bench/NAME.py` (their folder is on sys.path); stdlib only.
"""

import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

ANNOUNCEMENT = re.compile(r"serving the Skills Protocol at (\S+)")


def start_serve(binary, arguments, timeout_seconds=60):
    """Start `BINARY serve ARGUMENTS...` (which must listen on port 0) and return the process and
    its `/rpc` URL once announced; stderr is drained from then on so the server never blocks on
    it. Exits the script when no address is announced in time."""
    process = subprocess.Popen([binary, "serve", *arguments], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_seconds
    for line in process.stderr:
        match = ANNOUNCEMENT.search(line)
        if match:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, match.group(1)
        if time.monotonic() > deadline:
            break
    process.kill()
    process.wait()
    raise SystemExit("the server did not announce its address")


def status_number(pid, field):
    """The first number of a /proc/PID/status field (`VmHWM`, `VmRSS` in KiB, `Uid`, `PPid`), or
    None when the process or the field is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid):
    """CPU time (user + system) a process has used, in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    """A TCP port on 127.0.0.1 free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children(pid: int) -> set[int]:
    """The pids of PID's children, from /proc (an empty set once it is gone)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def process_tree(pid: int) -> list[int]:
    """PID and all its descendants, from /proc."""
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending.extend(children(current))
    return tree
