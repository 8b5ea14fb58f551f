// Preloaded with NODE_OPTIONS=--require=.../upstreams.cjs by mcpwatch's tests
// (internal/peertest): the npm MCP servers of this folder call their APIs at
// fixed origins (https://api.github.com, https://slack.com,
// https://api.search.brave.com) through the global fetch, with no setting to
// point them elsewhere. This sends each of those origins to a stand-in on
// loopback instead, so a test needs no network and no real account.
//
// MCPWATCH_UPSTREAMS is a JSON object from origin to stand-in base URL:
//   {"https://api.github.com": "http://127.0.0.1:41234"}
// A request to any other origin is refused, so a test can never reach the
// real service by mistake.
"use strict";

const raw = process.env.MCPWATCH_UPSTREAMS;
if (raw) {
  const upstreams = JSON.parse(raw);
  const realFetch = globalThis.fetch;

  // redirect returns the stand-in URL for url, or throws for an origin
  // that has no stand-in.
  function redirect(url) {
    const u = new URL(url);
    const to = upstreams[u.origin];
    if (!to) {
      throw new TypeError(`fetch failed: ${u.origin} has no stand-in (MCPWATCH_UPSTREAMS)`);
    }
    return new URL(u.pathname + u.search, to).toString();
  }

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
}
