//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A credentialed server as a newcomer installs it: the .mcp.json entry its
// README shows, run with npx at its pinned version, against stand-ins of
// its service.
type newcomerServer struct {
	name string
	pkg  peertest.Package
	// bin, when the README runs the package's bin by name (`npx -y
	// --package NAME@VERSION -- BIN ...`); else `npx -y NAME@VERSION ...`.
	bin string
	// args after the package (or bin), env: as the README shows them, the
	// credential as ${VAR}.
	args []string
	env  map[string]string
	// variable holds the credential; good is one the stand-in takes, fake
	// one it never issued.
	variable, good, fake string
	// companions are the other ${VAR}s of env and their values (a second
	// key the server needs besides the one checked).
	companions map[string]string
	// apis starts the stand-ins of the service, taking good: the API the
	// server calls first, then any other origin it or mcpwatch's own check
	// at the issuer reaches (an identity endpoint on another host, a
	// documentation API).
	apis func(good string) []*peertest.API
	// proxyEnv, for a server whose HTTP client the Node preload does not
	// reach (a Go binary, undici's own fetch): its own documented settings
	// for an outgoing proxy and a CA to trust, sending it through
	// peertest.Proxy.
	proxyEnv func(proxy, caFile string) map[string]string
}

// standIn starts one stand-in that takes good: the apis of a server that
// calls one.
func standIn(start func(good ...string) *peertest.API) func(string) []*peertest.API {
	return func(good string) []*peertest.API { return []*peertest.API{start(good)} }
}

// issuerStandIn is start's stand-in with a stand-in of the issuer
// catalogue's service id at base ("" for its documented one): for a
// service whose identity endpoint is on another host than its API, or a
// server that calls nothing but what it is asked for.
func issuerStandIn(id, base string, start func(good ...string) *peertest.API) func(string) []*peertest.API {
	return func(good string) []*peertest.API {
		var apis []*peertest.API
		if start != nil {
			apis = append(apis, start(good))
		}
		var iss *peertest.API
		var err error
		if base == "" {
			iss, err = peertest.NewIssuer(id, good)
		} else {
			iss, err = peertest.NewIssuerAt(id, base, good)
		}
		if err != nil {
			panic(err) // the catalogue and its documented answers are the test's fixtures
		}
		return append(apis, iss)
	}
}

// newcomerServers are the nine credentialed servers people install today,
// each at the version npx resolved on 2026-12-02.
func newcomerServers() []newcomerServer {
	return []newcomerServer{
		{name: "brave-search", pkg: peertest.BraveSearchMCP, env: map[string]string{"BRAVE_API_KEY": "${BRAVE_API_KEY}"},
			variable: "BRAVE_API_KEY", good: "BSAgoodKey0000000000000000000", fake: "BSAfakeKey0000000000000000000", apis: standIn(peertest.NewBrave)},
		{name: "notion", pkg: peertest.NotionMCP, env: map[string]string{"NOTION_TOKEN": "${NOTION_TOKEN}"},
			variable: "NOTION_TOKEN", good: "ntn_good0000000000000000000000000000000000000", fake: "ntn_fake0000000000000000000000000000000000000", apis: standIn(peertest.NewNotion)},
		{name: "sentry", pkg: peertest.SentryMCP, env: map[string]string{"SENTRY_ACCESS_TOKEN": "${SENTRY_ACCESS_TOKEN}"},
			variable: "SENTRY_ACCESS_TOKEN", good: "sntryu_900d000000000000000000000000000000000000000000000000000000000000", fake: "sntryu_fa4e000000000000000000000000000000000000000000000000000000000000", apis: standIn(peertest.NewSentry)},
		// Stripe's remote server and its API (the issuer) are two hosts.
		{name: "stripe", pkg: peertest.StripeMCP, args: []string{"--api-key=${STRIPE_SECRET_KEY}"},
			variable: "STRIPE_SECRET_KEY", good: "rk_test_good00000000000000000000001234", fake: "rk_test_fake00000000000000000000005678", apis: issuerStandIn("stripe", "", peertest.NewStripe)},
		{name: "context7", pkg: peertest.Context7MCP, args: []string{"--api-key", "${CONTEXT7_API_KEY}"},
			variable: "CONTEXT7_API_KEY", good: "ctx7sk-good0000-0000-0000-000000000000", fake: "ctx7sk-fake0000-0000-0000-000000000000", apis: standIn(peertest.NewContext7)},
		// A Go binary: slack-mcp-server's documented settings for an
		// outgoing proxy and a CA to trust.
		{name: "slack-mcp-server", pkg: peertest.SlackMCP, args: []string{"--transport", "stdio"}, env: map[string]string{"SLACK_MCP_XOXP_TOKEN": "${SLACK_MCP_XOXP_TOKEN}"},
			variable: "SLACK_MCP_XOXP_TOKEN", good: "xoxp-1111111111-2222222222-3333333333-good0000000000000000000000000000", fake: "xoxp-1111111111-2222222222-3333333333-fake0000000000000000000000000000", apis: standIn(peertest.NewSlack),
			proxyEnv: func(proxy, ca string) map[string]string {
				return map[string]string{"SLACK_MCP_PROXY": proxy, "SLACK_MCP_SERVER_CA": ca}
			}},
		{name: "server-github", pkg: peertest.GitHubRef, env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"},
			variable: "GITHUB_PERSONAL_ACCESS_TOKEN", good: "ghp_good00000000000000000000000000000000", fake: "ghp_fake00000000000000000000000000000000", apis: standIn(peertest.NewGitHub)},
		{name: "server-slack", pkg: peertest.SlackRef, env: map[string]string{"SLACK_BOT_TOKEN": "${SLACK_BOT_TOKEN}", "SLACK_TEAM_ID": "T0123ABCDEF"},
			variable: "SLACK_BOT_TOKEN", good: "xoxb-1111111111-2222222222-good00000000000000000000", fake: "xoxb-1111111111-2222222222-fake00000000000000000000", apis: standIn(peertest.NewSlack)},
		{name: "server-brave-search", pkg: peertest.BraveRef, env: map[string]string{"BRAVE_API_KEY": "${BRAVE_API_KEY}"},
			variable: "BRAVE_API_KEY", good: "BSAgoodKey1111111111111111111", fake: "BSAfakeKey1111111111111111111", apis: standIn(peertest.NewBrave)},
	}
}

// The three ways a newcomer meets a server.
const (
	modeGood        = "good credential"
	modeFake        = "fake credential"
	modeUnreachable = "service unreachable"
)

// reasonInOutput finds the reasons check names: "failed (credential_rejected)",
// "(timeout)", "(exited)", and the summary's "failed: credential_rejected on 1".
var reasonInOutput = regexp.MustCompile(`\((credential_[a-z]+|upstream_[a-z]+|timeout|exited|[a-z]+_error|[a-z]+_failed)\)|failed: (credential_[a-z]+|upstream_[a-z]+|[a-z]+_failed) on \d`)

// TestNewcomerCredentials is the acceptance of a dead credential recognised
// on the servers people run today: for each of the nine, a plain .mcp.json
// as its README shows it and `mcpwatch init` with the credential that works
// (what a newcomer commits), then `mcpwatch check` with the good credential
// (exit 0), a fake one (exit 78, credential_rejected, naming the
// credential) and the good one with the service unreachable (never
// credential_rejected). No request leaves loopback: each server
// reaches a stand-in of its service, any other origin is refused.
func TestNewcomerCredentials(t *testing.T) {
	t.Parallel()
	runNewcomers(t, "the nine servers", newcomerServers(), false)
}

// runNewcomers runs init then check on each of servers in the three modes,
// at once, and logs the table of what check gave. byIssuer: a fake
// credential must be found by mcpwatch's own check at its issuer, with no
// tool called.
func runNewcomers(t *testing.T, title string, servers []newcomerServer, byIssuer bool) {
	// Skips (or fails under CI) here, before any subtest, when a package is missing.
	for _, s := range servers {
		_ = peertest.NpxProject(t, s.pkg)
	}

	var (
		mu    sync.Mutex
		table = map[string]map[string]string{}
		calls = map[string]callsAMonth{}
	)
	start := time.Now()
	t.Cleanup(func() {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, init (good credential) then check (%s of wall time):\n", title, time.Since(start).Round(time.Second))
		fmt.Fprintf(&b, "| %-45s | %-40s | %-40s | %-40s |\n", "server", modeGood, modeFake, modeUnreachable)
		names := make([]string, 0, len(servers))
		for _, s := range servers {
			names = append(names, s.pkg.Spec())
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "| %-45s | %-40s | %-40s | %-40s |\n", n, table[n][modeGood], table[n][modeFake], table[n][modeUnreachable])
		}
		// What init wrote, and the schedules the daemon runs it on.
		fmt.Fprintf(&b, "\ncanary calls in 30 days at the defaults (call_schedule %q), of what init wrote:\n", config.DefaultCallSchedule)
		fmt.Fprintf(&b, "| %-48s | %-40s | %-22s | %-22s | %s\n", "server", "called", "on call_schedule alone", "at the daemon's pace", "paced")
		before, after := 0, 0
		for _, n := range names {
			c := calls[n]
			before, after = before+c.before, after+c.after
			fmt.Fprintf(&b, "| %-48s | %-40s | %22d | %22d | %s\n", n, strings.Join(c.tools, ", "), c.before, c.after, strings.Join(c.paced, "; "))
		}
		fmt.Fprintf(&b, "| %-48s | %-40s | %22d | %22d |\n", "all "+strconv.Itoa(len(names)), "", before, after)
		t.Log(b.String())
	})

	for _, s := range servers {
		for _, mode := range []string{modeGood, modeFake, modeUnreachable} {
			t.Run(s.name+"/"+strings.ReplaceAll(mode, " ", "_"), func(t *testing.T) {
				t.Parallel()
				got, c := runNewcomer(t, s, mode, byIssuer)
				mu.Lock()
				if table[s.pkg.Spec()] == nil {
					table[s.pkg.Spec()] = map[string]string{}
				}
				table[s.pkg.Spec()][mode] = got
				if mode == modeGood {
					calls[s.pkg.Spec()] = c
				}
				mu.Unlock()
			})
		}
	}
}

// callsAMonth is what the daemon would call of a server in 30 days, of
// the contracts init wrote: before, every contract that is called on the
// server's call_schedule (what the daemon did before calls were paced);
// after, on the schedules it runs them on now (config.Server.CallPlan).
type callsAMonth struct {
	tools         []string // the contracts that are called (held ones marked)
	before, after int
	paced         []string // the contracts not on call_schedule, with their schedule
}

// newcomerCalls reads the configuration in dir as every command does,
// with the contracts files init wrote, and counts its server's calls.
func newcomerCalls(t *testing.T, dir, name string) callsAMonth {
	t.Helper()
	getenv := func(string) string { return "" }
	src, err := config.Discover("", dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := imports.LoadSource(src, getenv)
	if err != nil {
		t.Fatalf("load what init wrote: %v", err)
	}
	var c callsAMonth
	for _, s := range cfg.Servers {
		if s.Name != name {
			continue
		}
		every := config.CallPlan{Schedule: s.CallSchedule}.PerMonth()
		for _, p := range s.CallPlans() {
			c.before += every
			c.after += p.PerMonth()
			if p.Schedule == "" {
				c.tools = append(c.tools, p.Tool+" (held)")
			} else {
				c.tools = append(c.tools, p.Tool)
			}
			if p.Schedule != s.CallSchedule {
				c.paced = append(c.paced, fmt.Sprintf("%s %q", p.Tool, p.Schedule))
			}
		}
	}
	return c
}

// checkReport is what the acceptance reads of check's JSON report: each
// server's canary calls and its credentials' checks at their issuers.
type checkReport struct {
	Servers []struct {
		Name  string `json:"name"`
		Calls []struct {
			Passed bool `json:"passed"`
		} `json:"calls"`
		Probe *struct {
			Credentials *probe.CredentialStatus `json:"credentials"`
		} `json:"probe"`
	} `json:"servers"`
}

// issuerVerdicts are the verdicts of the issuer checks of the report's
// servers, by credential ("env:NOTION_TOKEN": "rejected"), and the canary
// calls it lists, and of them those that passed.
func (r checkReport) issuerVerdicts() (verdicts map[string]probe.IssuerVerdict, calls, passed int) {
	verdicts = map[string]probe.IssuerVerdict{}
	for _, s := range r.Servers {
		calls += len(s.Calls)
		for _, c := range s.Calls {
			if c.Passed {
				passed++
			}
		}
		if s.Probe == nil || s.Probe.Credentials == nil {
			continue
		}
		for _, c := range s.Probe.Credentials.Issuer {
			verdicts[c.Credential] = c.Verdict
		}
	}
	return verdicts, calls, passed
}

// runNewcomer runs init then check on s in mode, asserts what the mode
// demands, and returns what check gave, in a few words, for the table,
// and the calls a month of what init wrote.
func runNewcomer(t *testing.T, s newcomerServer, mode string, byIssuer bool) (string, callsAMonth) {
	dir := peertest.NpxProject(t, s.pkg)
	apis := s.apis(s.good)
	for _, a := range apis {
		defer a.Close()
	}
	// mcpwatch's own check of the credential at its issuer goes through
	// this proxy, as HTTPS_PROXY and SSL_CERT_FILE send a Go program; so
	// do the servers given proxyEnv, by their own settings.
	proxy, err := peertest.NewProxy(apis...)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	mcpwatchEnv := func(credential string) map[string]string {
		env := map[string]string{s.variable: credential, "HTTPS_PROXY": proxy.URL(), "SSL_CERT_FILE": proxy.CAFile()}
		maps.Copy(env, s.companions)
		return env
	}
	// writeConfig writes the .mcp.json: the README's entry, and the
	// plumbing that sends the server to the stand-ins (or, with the
	// service down, to a port that refuses).
	down := false
	writeConfig := func() {
		env := map[string]string{}
		maps.Copy(env, s.env)
		maps.Copy(env, peertest.NpxEnv())
		// Node servers reach the stand-ins through the preload; npx itself
		// runs under it too, so it can reach no registry either.
		maps.Copy(env, peertest.NodeEnv(apis...))
		if s.proxyEnv != nil {
			to := proxy.URL()
			if down {
				to = peertest.RefusedURL() // no proxy answers
			}
			maps.Copy(env, s.proxyEnv(to, proxy.CAFile()))
		}
		args := append([]string{"-y", s.pkg.Spec()}, s.args...)
		if s.bin != "" {
			args = append([]string{"-y", "--package", s.pkg.Spec(), "--", s.bin}, s.args...)
		}
		writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
			s.name: map[string]any{"command": "npx", "args": args, "env": env},
		}))
	}
	// Servers start under npx, several at once on a shared machine: the
	// deadline is a guard, not a timing claim.
	const guard = "--timeout=2m"

	// The setup a newcomer commits: init with the credential that works,
	// the service up.
	writeConfig()
	initRun := runBin(t, dir, mcpwatchEnv(s.good), "init", guard)
	t.Logf("mcpwatch init (exit %d, %s):\n%s%s", initRun.code, initRun.took.Round(time.Millisecond), initRun.stdout, initRun.stderr)
	if initRun.code != exitOK {
		t.Errorf("init with the good credential and the service up: exit %d", initRun.code)
		return fmt.Sprintf("init %d", initRun.code), callsAMonth{}
	}
	calls := newcomerCalls(t, dir, s.name)
	if calls.after > calls.before || strings.Contains(s.name, "brave") && calls.after > 100 {
		t.Errorf("the canaries of what init wrote are called %d times in 30 days (%d on call_schedule alone): want no more, and at most 100 of Brave's 2,000 free searches", calls.after, calls.before)
	}

	// Then check, in mode.
	credential := s.good
	switch mode {
	case modeFake:
		credential = s.fake
	case modeUnreachable:
		down = true
		for _, a := range apis {
			a.Down(true)
		}
		writeConfig()
	}
	before, beforeIdentity := requests(apis)
	check := runBin(t, dir, mcpwatchEnv(credential), "check", guard, "--format", "json", "--output", "check.json")
	t.Logf("mcpwatch check (%s, exit %d, %s):\n%s%s", mode, check.code, check.took.Round(time.Millisecond), check.stdout, check.stderr)
	var report checkReport
	if raw, err := os.ReadFile(filepath.Join(dir, "check.json")); err != nil {
		t.Errorf("check wrote no JSON report: %v", err)
	} else if err := json.Unmarshal(raw, &report); err != nil {
		t.Errorf("check's JSON report: %v", err)
	}
	verdicts, called, passed := report.issuerVerdicts()
	issuer := verdicts["env:"+s.variable]
	for name, v := range verdicts {
		if strings.HasPrefix(name, "arg:") && issuer == "" {
			issuer = v // a credential passed in an argument is named by its flag
		}
	}

	for _, secret := range []string{s.good, s.fake} {
		if strings.Contains(initRun.stdout+initRun.stderr+check.stdout+check.stderr, secret) {
			t.Errorf("a credential's value in mcpwatch's output")
		}
	}
	for _, a := range apis {
		if a.Writes() != 0 {
			t.Errorf("%s saw %d requests that write", a.Name, a.Writes())
		}
		t.Logf("%s saw, init and check: %s", a.Name, strings.Join(a.Seen(), ", "))
	}

	reasons := []string{}
	for _, m := range reasonInOutput.FindAllStringSubmatch(check.stdout, -1) {
		if r := m[1] + m[2]; !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	got := fmt.Sprintf("check %d", check.code)
	if len(reasons) > 0 {
		got += " " + strings.Join(reasons, ",")
	}
	if issuer != "" {
		got += ", issuer " + string(issuer)
	}
	if called == 0 {
		got += ", no call"
	} else {
		got += fmt.Sprintf(", %d/%d calls passed", passed, called)
	}

	switch mode {
	case modeGood:
		if check.code != exitOK {
			t.Errorf("with a good credential check must pass: exit %d", check.code)
		}
	case modeFake:
		// A credential passed in an argument may be named by its flag.
		named := strings.Contains(check.stdout, s.variable) || len(s.args) > 0 && regexp.MustCompile(`arg:--[a-z-]+`).MatchString(check.stdout)
		if check.code != exitConfig || !strings.Contains(check.stdout, "credential_rejected") || !named {
			t.Errorf("with a fake credential check must exit %d naming credential_rejected and %s: exit %d", exitConfig, s.variable, check.code)
		}
		if byIssuer {
			// Found by the check at the issuer, which calls no tool: the
			// table shows the canary calls check made besides, those init
			// enabled on tools the server annotates read-only.
			if issuer != probe.IssuerRejected || !strings.Contains(check.stdout, "rejected by its issuer") {
				t.Errorf("the fake credential must be rejected by its issuer: issuer %q", issuer)
			}
			all, identity := requests(apis)
			t.Logf("the stand-ins saw %d requests during check: %d at the identity endpoint, %d others; the report lists %d calls", all-before, identity-beforeIdentity, all-before-identity+beforeIdentity, called)
		}
	case modeUnreachable:
		if strings.Contains(check.stdout, "credential_rejected") {
			t.Errorf("with the service unreachable and a good credential, nothing may be called credential_rejected")
		}
	}
	return got, calls
}

// requests counts the requests the stand-ins answered, and of them those
// at the identity endpoint of the service.
func requests(apis []*peertest.API) (all, identity int) {
	for _, a := range apis {
		all += a.Requests()
		identity += a.IdentityRequests()
	}
	return all, identity
}
