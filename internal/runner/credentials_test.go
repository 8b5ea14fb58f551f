package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A JWT in an env value or a header has its exp exported (read without
// verifying); an opaque token has none; the JWT never shows in the result.
func TestProbeReadsJWTExpiry(t *testing.T) {
	// {"alg":"none"} . {"exp":2000000000} . no signature
	const jwt = "eyJhbGciOiJub25lIn0.eyJleHAiOjIwMDAwMDAwMDB9."
	lookup := func(name string) (string, bool) {
		switch name {
		case "JWT":
			return jwt, true
		case "OPAQUE":
			return "opaque-token-value-123", true
		}
		return "", false
	}
	s := normalized(config.Server{
		Name: "echo", Command: "/bin/sh", Transport: probe.TransportStdio,
		Args: []string{"-c", `echo "token $API_TOKEN" >&2; exit 3`},
		Env:  map[string]string{"API_TOKEN": "${JWT}", "OTHER": "${OPAQUE}"},
	})
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup, Timeout: 5 * time.Second})
	c := obs.Result.Credentials
	if c == nil || len(c.Expiries) != 1 || c.Expiries[0].Credential != "env:API_TOKEN" || c.Expiries[0].Expiry.Unix() != 2000000000 || c.OAuth {
		t.Fatalf("credentials = %+v, want env:API_TOKEN expiring at 2000000000", c)
	}
	if strings.Contains(obs.Result.StderrTail, jwt) {
		t.Errorf("the JWT shows in the stderr tail: %q", obs.Result.StderrTail)
	}
}
