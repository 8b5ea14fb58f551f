package probe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A 401 names the step that failed: without a credential, a server that
// publishes OAuth metadata gets the advice to configure auth; with a static
// header, the call itself was refused.
func TestUnauthorizedNamesTheStep(t *testing.T) {
	_, url := kitServer(t, probetest.Config{Behavior: probetest.Unauthorized401, Token: httpToken}, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res := probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP}, probe.Options{})
	if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "configure auth: {type: oauth") {
		t.Errorf("no credential: %s: %s", res.Reason, res.Error)
	}
	res = probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP, Headers: bearerHeader("wrong-token-value")}, probe.Options{})
	if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "the call itself was refused") || !strings.Contains(res.Error, "Authorization header") {
		t.Errorf("a wrong static token: %s: %s", res.Reason, res.Error)
	}
}
