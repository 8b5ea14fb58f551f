// Package probetest starts MCP test servers that behave well or badly on
// purpose, in the spirit of net/http/httptest: as a real subprocess (the
// test binary re-executed by Command and RunIfChild, speaking stdio) or as
// an http.Handler (streamable HTTP with Handler or NewServer, the legacy
// HTTP+SSE transport with SSEHandler).
//
// One MCP message handler serves every transport and both protocol eras:
// the stateless 2026-07-28 era (server/discover, _meta on every request)
// and the initialize-based legacy eras, or both at once (Config.Era). The
// misbehaviors (Config.Behavior) are the ones a prober must survive: tool
// lists that depend on credentials, endless pagination, stalls, a server
// that ignores SIGTERM and leaves a grandchild, a 50 MiB line, a wrong id,
// HTTP 401/403/500 and a dripping body.
//
// It is hand-written rather than built on an SDK precisely so it can break
// the protocol. It imports nothing of mcpwatch and is meant for tests only.
//
// Typical use:
//
//	func TestMain(m *testing.M) {
//		probetest.RunIfChild()
//		goleak.VerifyTestMain(m)
//	}
//
//	path, args, env := probetest.Command(probetest.Config{Behavior: probetest.TokenGated})
//	env["REPORT_API_TOKEN"] = "secret"
//
//	srv := probetest.NewServer(probetest.Config{Era: probetest.EraModern})
//	ts := httptest.NewServer(srv)
//	defer ts.Close()
//	defer srv.Close()
//	... srv.Received("initialize") == 0
package probetest
