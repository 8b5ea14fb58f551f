// Preloaded with NODE_OPTIONS=--require=.../upstreams.cjs by mcpwatch's tests
// (internal/peertest): the npm MCP servers of this folder call their APIs at
// fixed origins (https://api.github.com, https://api.notion.com,
// https://sentry.io, https://mcp.stripe.com, ...) with no setting to point
// them elsewhere. This sends each of those origins to a stand-in on loopback
// instead, so a test needs no network and no real account. It covers the
// two ways Node code reaches the network: the global fetch (the MCP SDK,
// Sentry, Brave, Context7) and http/https.request (axios, as Notion's server
// uses it, and anything built on follow-redirects).
//
// MCPWATCH_UPSTREAMS is a JSON object from origin to stand-in base URL:
//   {"https://api.github.com": "http://127.0.0.1:41234"}
// A request to any other origin is refused as a closed port refuses it
// (ECONNREFUSED), so a test can never reach the real service by mistake.
// Loopback requests pass untouched.
"use strict";

const raw = process.env.MCPWATCH_UPSTREAMS;
if (raw) {
  const upstreams = JSON.parse(raw);
  const http = require("http");
  const https = require("https");
  const net = require("net");
  const { syncBuiltinESMExports } = require("module");

  function isLoopback(hostname) {
    const h = String(hostname || "").replace(/^\[|\]$/g, "");
    return h === "localhost" || h === "::1" || h.startsWith("127.");
  }

  function refusal(origin) {
    const err = new Error(`connect ECONNREFUSED: ${origin} has no stand-in (MCPWATCH_UPSTREAMS)`);
    err.code = "ECONNREFUSED";
    err.errno = -111;
    err.syscall = "connect";
    return err;
  }

  // redirect returns the stand-in URL for url, or throws for an origin
  // that has no stand-in.
  function redirect(url) {
    const u = new URL(url);
    if (isLoopback(u.hostname)) return u.toString();
    const to = upstreams[u.origin];
    if (!to) {
      throw new TypeError("fetch failed", { cause: refusal(u.origin) });
    }
    return new URL(u.pathname + u.search, to).toString();
  }

  const realFetch = globalThis.fetch;
  globalThis.fetch = function fetchViaStandIn(input, init) {
    try {
      if (input instanceof Request) {
        return realFetch(new Request(redirect(input.url), input), init);
      }
      return realFetch(redirect(input instanceof URL ? input.href : String(input)), init);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  // http.request and https.request take (url[, options][, callback]) or
  // (options[, callback]); requestVia reads either form, and sends a request
  // for a stood-in origin to its stand-in (always plain http on loopback).
  const realRequest = { "http:": http.request, "https:": https.request };
  function requestVia(defaultProtocol, args) {
    const cb = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
    let opts;
    if (typeof args[0] === "string" || args[0] instanceof URL) {
      const u = new URL(args[0]);
      opts = {
        protocol: u.protocol, hostname: u.hostname, port: u.port,
        path: u.pathname + u.search,
        ...(u.username ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` } : {}),
        ...(args[1] && typeof args[1] === "object" ? args[1] : {}),
      };
    } else {
      opts = { ...(args[0] || {}) };
    }
    const protocol = opts.protocol || defaultProtocol;
    let hostname = opts.hostname || opts.host || "localhost";
    let port = opts.port;
    if (!opts.hostname && typeof opts.host === "string" && /^[^\[]*:\d+$/.test(opts.host)) {
      [hostname, port] = opts.host.split(":");
    }
    if (isLoopback(hostname)) {
      return realRequest[protocol === "https:" ? "https:" : "http:"](...args);
    }
    const defaultPort = protocol === "https:" ? "443" : "80";
    const origin = `${protocol}//${hostname}${port && String(port) !== defaultPort ? `:${port}` : ""}`;
    const to = upstreams[origin];
    if (!to) {
      // A request that fails as a closed port fails: asynchronously, with
      // ECONNREFUSED, on the request's "error" event.
      delete opts.agent;
      return realRequest["http:"]({
        ...opts, protocol: "http:", hostname: "127.0.0.1", port: 1, agent: false,
        createConnection() {
          const socket = new net.Socket();
          process.nextTick(() => socket.destroy(refusal(origin)));
          return socket;
        },
      }, cb);
    }
    const target = new URL(to);
    const headers = { ...(opts.headers || {}) };
    const redirected = {
      ...opts, headers, protocol: target.protocol, hostname: target.hostname, port: target.port,
    };
    delete redirected.host;
    delete redirected.agent; // an https.Agent cannot carry a plain http request
    delete redirected.servername;
    return realRequest[target.protocol](redirected, cb);
  }

  for (const [mod, protocol] of [[http, "http:"], [https, "https:"]]) {
    mod.request = function requestViaStandIn(...args) {
      return requestVia(protocol, args);
    };
    mod.get = function getViaStandIn(...args) {
      const req = requestVia(protocol, args);
      req.end();
      return req;
    };
  }
  // ES modules that imported { request } from "https" see the change too.
  syncBuiltinESMExports();
}
