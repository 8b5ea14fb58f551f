#!/usr/bin/env python3
"""A legacy MCP server over stdio, Python standard library only.

It behaves as servers built on the Python MCP SDK do where a prober can
tell: newline-delimited JSON-RPC on stdin and stdout, the initialize
handshake (2024-11-05 to 2025-11-25), and a request other than initialize
or ping before initialization answered with -32602 (so server/discover gets
-32602 and the process goes on). Its tools depend on a credential, like the
report servers this project watches: with REPORT_API_TOKEN set it lists
fetch_daily_report and list_report_dates, without it none.

mcpwatch's benchmarks and tests start it; it is not part of mcpwatch.
"""
import json
import os
import sys

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

TOOLS = [
    {
        "name": "fetch_daily_report",
        "description": "Fetch the daily sales report",
        "inputSchema": {
            "type": "object",
            "properties": {"date": {"type": "string", "description": "the day, YYYY-MM-DD"}},
            "required": ["date"],
        },
    },
    {
        "name": "list_report_dates",
        "description": "List available report dates",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def reply(out, msg_id, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    out.write(json.dumps(msg, separators=(",", ":")) + "\n")
    out.flush()


def handle(state, req):
    """Returns (result, error) for one request."""
    method = req.get("method")
    params = req.get("params") or {}
    if method == "ping":
        return {}, None
    if method == "initialize":
        asked = params.get("protocolVersion")
        state["initialized"] = True
        return {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "python-report-server", "version": "1.0.0"},
        }, None
    if not state["initialized"]:
        return None, {"code": -32602, "message": "Invalid request parameters", "data": ""}
    if method == "tools/list":
        tools = TOOLS if os.environ.get("REPORT_API_TOKEN") else []
        return {"tools": tools}, None
    if method == "tools/call":
        if not os.environ.get("REPORT_API_TOKEN"):
            return {"content": [{"type": "text", "text": "unauthorized"}], "isError": True}, None
        return {"content": [{"type": "text", "text": "no sales"}], "isError": False}, None
    return None, {"code": -32601, "message": "Method not found"}


def main():
    state = {"initialized": False}
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            reply(out, None, error={"code": -32700, "message": "Parse error"})
            continue
        if not isinstance(req, dict) or "method" not in req:
            continue  # a response or junk: nothing to answer
        if "id" not in req:
            continue  # a notification
        result, error = handle(state, req)
        reply(out, req["id"], result, error)


if __name__ == "__main__":
    main()
