package issuer

import (
	"strings"
	"testing"
)

const (
	ghToken = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	glToken = "glpat-0123456789abcdefABCD"
	slToken = "xoxp-1111111111-2222222222-3333333333-abcdef0123456789abcdef0123456789"
)

func env(kv ...string) (map[string]string, []Value) {
	m := map[string]string{}
	var vs []Value
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
		vs = append(vs, Value{Name: "env:" + kv[i], Value: kv[i+1]})
	}
	return m, vs
}

func ties(s Server) string {
	var out []string
	for _, t := range Match(s) {
		line := t.Service.ID + " " + t.Credential + " by " + t.By + " -> " + t.Base
		if t.Skip != "" {
			line += " (skip: " + t.Skip + ")"
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// A credential is tied to a service by two signals only: its format, and
// its name, the server's package or the server's URL. One of the two is
// never enough.
func TestMatchTwoSignals(t *testing.T) {
	m, vs := env("GITHUB_PERSONAL_ACCESS_TOKEN", ghToken)
	named := Server{Command: "my-server", Env: m, Values: vs}
	m2, vs2 := env("MY_TOKEN", ghToken)
	unnamed := Server{Command: "my-server", Env: m2, Values: vs2}
	m3, vs3 := env("GITHUB_PERSONAL_ACCESS_TOKEN", "not-a-token-of-github-0123456789")
	shapeless := Server{Command: "my-server", Env: m3, Values: vs3}
	byPackage := unnamed
	byPackage.Command, byPackage.Args = "npx", []string{"-y", "@modelcontextprotocol/server-github@2025.4.8"}
	looseArg := unnamed
	looseArg.Command, looseArg.Args = "my-wrapper", []string{"@modelcontextprotocol/server-github"}
	remote := Server{URL: "https://api.githubcopilot.com/mcp/", Values: []Value{{Name: "header:Authorization", Value: "Bearer " + ghToken}}}
	remoteElsewhere := Server{URL: "https://mcp.example.com/mcp", Values: []Value{{Name: "header:Authorization", Value: "Bearer " + ghToken}}}

	for name, c := range map[string]struct {
		s    Server
		want string
	}{
		"name and format":       {named, "github env:GITHUB_PERSONAL_ACCESS_TOKEN by name GITHUB_PERSONAL_ACCESS_TOKEN -> https://api.github.com"},
		"format alone":          {unnamed, ""},
		"name alone":            {shapeless, ""},
		"package and format":    {byPackage, "github env:MY_TOKEN by package @modelcontextprotocol/server-github -> https://api.github.com"},
		"package not run":       {looseArg, ""},
		"url and bearer":        {remote, "github header:Authorization by url https://api.githubcopilot.com/mcp -> https://api.github.com"},
		"bearer to another url": {remoteElsewhere, ""},
	} {
		if got := ties(c.s); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, c.want)
		}
	}
}

// A setting the catalogue names moves the check to the server's own
// instance, over https only; a registry entry's setting, or one that
// looks like another instance the catalogue does not know, skips the
// check rather than ask the public service about another's credential.
func TestMatchBase(t *testing.T) {
	for name, c := range map[string]struct {
		env       []string
		untrusted bool
		want      string
	}{
		"documented":        {[]string{"GITLAB_PERSONAL_ACCESS_TOKEN", glToken}, false, "gitlab env:GITLAB_PERSONAL_ACCESS_TOKEN by name GITLAB_PERSONAL_ACCESS_TOKEN -> https://gitlab.com/api/v4"},
		"self-managed":      {[]string{"GITLAB_PERSONAL_ACCESS_TOKEN", glToken, "GITLAB_API_URL", "https://git.example.com/api/v4/"}, false, "gitlab env:GITLAB_PERSONAL_ACCESS_TOKEN by name GITLAB_PERSONAL_ACCESS_TOKEN -> https://git.example.com/api/v4"},
		"plain http":        {[]string{"GITLAB_PERSONAL_ACCESS_TOKEN", glToken, "GITLAB_API_URL", "http://git.example.com/api/v4"}, false, "gitlab env:GITLAB_PERSONAL_ACCESS_TOKEN by name GITLAB_PERSONAL_ACCESS_TOKEN -> https://gitlab.com/api/v4 (skip: env:GITLAB_API_URL does not name an https URL: the check goes only over verified HTTPS)"},
		"registry's":        {[]string{"GITLAB_PERSONAL_ACCESS_TOKEN", glToken, "GITLAB_API_URL", "https://evil.example/api/v4"}, true, "gitlab env:GITLAB_PERSONAL_ACCESS_TOKEN by name GITLAB_PERSONAL_ACCESS_TOKEN -> https://gitlab.com/api/v4 (skip: its base is moved by env:GITLAB_API_URL, which a registry entry set: not checked)"},
		"unknown setting":   {[]string{"GITLAB_PERSONAL_ACCESS_TOKEN", glToken, "GITLAB_URL", "https://git.example.com"}, false, "gitlab env:GITLAB_PERSONAL_ACCESS_TOKEN by name GITLAB_PERSONAL_ACCESS_TOKEN -> https://gitlab.com/api/v4 (skip: GITLAB_URL may name another instance of GitLab than the catalogue's https://gitlab.com/api/v4: not checked)"},
		"host template":     {[]string{"GITHUB_TOKEN", ghToken, "GITHUB_HOST", "github.example.com"}, false, "github env:GITHUB_TOKEN by name GITHUB_TOKEN -> https://github.example.com/api/v3"},
		"a setting, no URL": {[]string{"GITHUB_TOKEN", ghToken, "GITHUB_TOOLSETS", "repos,issues"}, false, "github env:GITHUB_TOKEN by name GITHUB_TOKEN -> https://api.github.com"},
		// slack-mcp-server's CA file to trust (a TLS-inspecting proxy's):
		// a file, not where Slack is.
		"a CA file":       {[]string{"SLACK_MCP_XOXP_TOKEN", slToken, "SLACK_MCP_SERVER_CA", "/etc/ssl/certs/corp-proxy.pem"}, false, "slack env:SLACK_MCP_XOXP_TOKEN by name SLACK_MCP_XOXP_TOKEN -> https://slack.com/api"},
		"a relative file": {[]string{"GITLAB_TOKEN", glToken, "GITLAB_API_CA", "./certs/ca.pem"}, false, "gitlab env:GITLAB_TOKEN by name GITLAB_TOKEN -> https://gitlab.com/api/v4"},
		"a Windows file":  {[]string{"GITLAB_TOKEN", glToken, "GITLAB_SERVER_CA", `C:\certs\ca.pem`}, false, "gitlab env:GITLAB_TOKEN by name GITLAB_TOKEN -> https://gitlab.com/api/v4"},
		"a host, still":   {[]string{"GITLAB_TOKEN", glToken, "GITLAB_SERVER", "git.example.com"}, false, "gitlab env:GITLAB_TOKEN by name GITLAB_TOKEN -> https://gitlab.com/api/v4 (skip: GITLAB_SERVER may name another instance of GitLab than the catalogue's https://gitlab.com/api/v4: not checked)"},
	} {
		m, vs := env(c.env...)
		if got := ties(Server{Command: "x", Env: m, Values: vs, Untrusted: c.untrusted}); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, c.want)
		}
	}
}

// A credential inside a longer value is found when its format starts with
// a literal prefix: a header's scheme, a JSON of headers.
func TestMatchWithin(t *testing.T) {
	m, vs := env("GITHUB_TOKEN", "token "+ghToken)
	if got := ties(Server{Command: "x", Env: m, Values: vs}); !strings.HasPrefix(got, "github env:GITHUB_TOKEN") {
		t.Errorf("a token after its scheme: %q", got)
	}
	m, vs = env("GITHUB_TOKEN", ghToken+"extra")
	if got := ties(Server{Command: "x", Env: m, Values: vs}); got != "" {
		t.Errorf("a token that runs on is no token of the format: %q", got)
	}
}

// The endpoint shown for people names the host, the method and the path
// as written, never a value.
func TestEndpoint(t *testing.T) {
	m, vs := env("GITHUB_PERSONAL_ACCESS_TOKEN", ghToken)
	tie := Match(Server{Command: "x", Env: m, Values: vs})[0]
	if got := tie.Endpoint(); got != "api.github.com GET /rate_limit" {
		t.Errorf("Endpoint = %q", got)
	}
	if s := tie.Secrets(); len(s) != 1 || s[0] != ghToken {
		t.Errorf("Secrets = %q", s)
	}
}

// Match runs at every probe of every server: a server whose values no
// name or package ties to a service costs lookups, not the catalogue's
// formats.
func BenchmarkMatch(b *testing.B) {
	m, vs := env("LOG_LEVEL", "info", "MEMORY_FILE_PATH", "/tmp/memory.json", "REPORT_API_TOKEN", "abcdefghijklmnop0123456789")
	for name, s := range map[string]Server{
		"untied":   {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: m, Values: vs},
		"bearer":   {URL: "https://mcp.example.com/mcp", Values: []Value{{Name: "header:Authorization", Value: "Bearer 0123456789abcdef0123456789abcdef"}}},
		"github":   {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Values: []Value{{Name: "env:GITHUB_PERSONAL_ACCESS_TOKEN", Value: ghToken}}},
		"no value": {URL: "https://mcp.example.com/mcp"},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Match(s)
			}
		})
	}
}
