#!/usr/bin/env python3
"""A reference MCP preflight in plain Python, to measure mcpwatch check against.

It does what a small CI script does: read the servers of a Claude Code
.mcp.json ($MCP_CONFIG, default .mcp.json) and the lock
($MCP_TOOL_LOCK, default mcp-tools.lock.json, {"server": ["tool", ...]}),
then, one server after the other, start it with the script's environment
plus the server's own env (${VAR} taken from the environment), send
initialize, notifications/initialized and tools/list (following
nextCursor), stop it, and compare the tools with the lock. Exit 0 when every
locked tool is there, 78 otherwise. Each server gets $MCP_PROBE_TIMEOUT_S
seconds (default 10). Standard library only; no era detection: it speaks
initialize, as every server it knows does.
"""
import json
import os
import re
import selectors
import subprocess
import sys
import time

REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ProbeError(Exception):
    pass


def expand(value):
    return REF.sub(lambda m: os.environ.get(m.group(1), ""), value)


class Session:
    def __init__(self, spec, deadline):
        env = dict(os.environ)
        env.update({k: expand(v) for k, v in (spec.get("env") or {}).items()})
        argv = [expand(spec["command"])] + [expand(a) for a in spec.get("args") or []]
        self.deadline = deadline
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""
        self.next_id = 0

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def line(self):
        while b"\n" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                raise ProbeError("timeout")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise ProbeError("the server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            msg = json.loads(self.line())
            if msg.get("id") != self.next_id or "method" in msg:
                continue  # a notification, or a request of the server's we do not serve
            if "error" in msg:
                raise ProbeError("%s: error %s" % (method, msg["error"].get("code")))
            return msg["result"]

    def close(self):
        self.sel.close()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.kill()
        self.proc.wait()


def list_tools(spec, timeout):
    s = Session(spec, time.monotonic() + timeout)
    try:
        s.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "reference-preflight", "version": "1"}})
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names, cursor = [], None
        while True:
            page = s.request("tools/list", {"cursor": cursor} if cursor else {})
            names += [t["name"] for t in page.get("tools", [])]
            cursor = page.get("nextCursor")
            if not cursor:
                return names
    finally:
        s.close()


def main():
    with open(os.environ.get("MCP_CONFIG", ".mcp.json")) as f:
        servers = json.load(f).get("mcpServers", {})
    with open(os.environ.get("MCP_TOOL_LOCK", "mcp-tools.lock.json")) as f:
        lock = json.load(f)
    timeout = float(os.environ.get("MCP_PROBE_TIMEOUT_S", "10"))
    started = time.monotonic()
    problems = []
    for name in sorted(set(servers) | set(lock)):
        if name not in servers:
            problems.append("%s: locked but not configured" % name)
            continue
        try:
            seen = set(list_tools(servers[name], timeout))
        except (ProbeError, OSError, ValueError, KeyError) as e:
            problems.append("%s: probe failed: %s" % (name, e))
            continue
        missing = [t for t in lock.get(name, []) if t not in seen]
        if missing:
            problems.append("%s: %d/%d tools missing -> %s" % (name, len(missing), len(lock[name]), ", ".join(missing)))
    took = 1000 * (time.monotonic() - started)
    if problems:
        print("MCP preflight FAILED in %.0f ms" % took)
        for p in problems:
            print("  - " + p)
        return 78
    print("MCP preflight OK in %.0f ms (%d servers)" % (took, len(servers)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
