// Preloaded with NODE_OPTIONS=--require=.../bind-localhost.cjs by mcpwatch's
// end-to-end tests. server-everything's HTTP transports call app.listen(PORT),
// which binds every interface and offers no host option; this keeps every TCP
// listen() of the process on 127.0.0.1 so a test never exposes a port.
// Unix socket paths and inherited handles are left alone.
"use strict";

const net = require("net");

const LOOPBACK = "127.0.0.1";
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  return (
    typeof value === "number" ||
    (typeof value === "string" && value !== "" && /^[0-9]+$/.test(value))
  );
}

// toLoopbackArgs rewrites the argument forms of server.listen() that open a
// TCP port into the options form with host 127.0.0.1, keeping the callback
// and backlog. It returns null for forms it must not touch.
function toLoopbackArgs(args) {
  const callback = args.find((a) => typeof a === "function");
  const first = args[0];
  let options;
  if (first === undefined || typeof first === "function" || first === null) {
    options = { port: 0 };
  } else if (isPort(first)) {
    options = { port: Number(first) };
    // listen(port, host, backlog, cb) or listen(port, backlog, cb)
    let rest = args.slice(1).filter((a) => typeof a !== "function");
    if (typeof rest[0] === "string" || rest[0] === undefined || rest[0] === null) {
      rest = rest.slice(1);
    }
    if (typeof rest[0] === "number") options.backlog = rest[0];
  } else if (typeof first === "object" && !("path" in first) && !("fd" in first) && !("_handle" in first) && !("handle" in first)) {
    options = { ...first };
  } else {
    return null; // a Unix socket path, a file descriptor or a handle
  }
  options.host = LOOPBACK;
  delete options.ipv6Only;
  return callback ? [options, callback] : [options];
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const rewritten = toLoopbackArgs(args);
  return originalListen.apply(this, rewritten === null ? args : rewritten);
};
