package oauth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A discovery error names the metadata URL it fetched, which holds the MCP
// server's path: a key there (as some hosted servers use) is redacted as
// everywhere else.
func TestDiscoveryErrorsRedactTheURL(t *testing.T) {
	const key = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/s/" + key + "/mcp?k=hunter22"
	res := run(t, newClient(t, oauth.Config{ServerURL: url}), url, probe.TransportHTTP)
	if res.OK {
		t.Fatal("the probe passed")
	}
	if !strings.Contains(res.Error, "/.well-known/oauth-protected-resource/s/<redacted>/mcp") {
		t.Errorf("the error does not name the redacted metadata URL: %s", res.Error)
	}
	if strings.Contains(res.Error, key) || strings.Contains(res.Error, "hunter22") {
		t.Errorf("the error shows the key: %s", res.Error)
	}
}
