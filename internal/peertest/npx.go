package peertest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// Package is an npm package pinned in testdata/peers that a test runs the
// way its README tells a newcomer to: `npx -y NAME@VERSION ...`.
type Package struct {
	Name, Version string
	// Project is the npm project under testdata/peers that pins it: ""
	// for testdata/peers itself, a folder of its own for a package whose
	// bin has the name of another's there (npx runs a package by its bin's
	// name, and one node_modules/.bin holds one of each).
	Project string
}

// Spec is NAME@VERSION, as npx takes it.
func (p Package) Spec() string { return p.Name + "@" + p.Version }

// project is the folder of the npm project that pins p.
func (p Package) project() string { return filepath.Join(dir(), filepath.FromSlash(p.Project)) }

// The credentialed servers people install today, at the versions pinned in
// testdata/peers/package.json.
var (
	BraveSearchMCP = Package{Name: "@brave/brave-search-mcp-server", Version: "2.1.4"}
	NotionMCP      = Package{Name: "@notionhq/notion-mcp-server", Version: "2.5.2"}
	SentryMCP      = Package{Name: "@sentry/mcp-server", Version: "0.39.0"}
	StripeMCP      = Package{Name: "@stripe/mcp", Version: "0.3.3"}
	Context7MCP    = Package{Name: "@upstash/context7-mcp", Version: "4.1.1"}
	SlackMCP       = Package{Name: "slack-mcp-server", Version: "1.3.0"} // a Go binary, shipped per platform as an optional dependency
	GitHubRef      = Package{Name: packageScope + "/" + GitHubServer, Version: "2025.4.8"}
	SlackRef       = Package{Name: packageScope + "/" + SlackServer, Version: "2025.4.25"}
	BraveRef       = Package{Name: packageScope + "/" + BraveServer, Version: "0.6.2"}
)

// Credentialed servers whose services the issuer catalogue
// (internal/issuer) covers, among the most installed on npm, at the
// versions pinned in testdata/peers/package.json (LaunchDarkly's in
// testdata/peers/launchdarkly).
var (
	SupabaseMCP     = Package{Name: "@supabase/mcp-server-supabase", Version: "0.13.0"}
	CircleCIMCP     = Package{Name: "@circleci/mcp-server-circleci", Version: "0.20.0"}
	TavilyMCP       = Package{Name: "tavily-mcp", Version: "0.2.22"}
	GitLabMCP       = Package{Name: "@zereight/mcp-gitlab", Version: "2.1.64"}
	LaunchDarklyMCP = Package{Name: "@launchdarkly/mcp-server", Version: "0.6.2", Project: "launchdarkly"} // its bin is mcp, as @stripe/mcp's
	FigmaMCP        = Package{Name: "figma-developer-mcp", Version: "0.13.2"}
	DatadogMCP      = Package{Name: "@winor30/mcp-server-datadog", Version: "1.8.0"}
	HubSpotMCP      = Package{Name: "@hubspot/mcp-server", Version: "0.4.0"}
	JiraMCP         = Package{Name: "@aashari/mcp-server-atlassian-jira", Version: "3.3.0"}
	PineconeMCP     = Package{Name: "@pinecone-database/mcp", Version: "0.3.0"}
)

// installedVersion is the version of the package installed in
// testdata/peers/node_modules, or an error saying it is not.
func installedVersion(p Package) (string, error) {
	raw, err := os.ReadFile(filepath.Join(p.project(), "node_modules", filepath.FromSlash(p.Name), "package.json"))
	if err != nil {
		return "", fmt.Errorf("%s is not installed in %s: %s", p.Spec(), p.project(), installPeersHint)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", fmt.Errorf("%s: its package.json: %w", p.Spec(), err)
	}
	return meta.Version, nil
}

// NpxProject returns a new empty folder, removed when t ends, in which
// `npx -y NAME@VERSION` runs the pinned packages pkgs (of one npm project)
// from testdata/peers and never asks the registry: npm resolves a package
// in the nearest folder above with a node_modules, and this folder lies
// inside the project's.
// (A server's working folder is that of its configuration file, so a
// .mcp.json written here runs them so.) Without node, npx or one of pkgs
// the test is skipped, or fails under CI, which installs them
// (scripts/e2e-deps.sh).
func NpxProject(t testing.TB, pkgs ...Package) string {
	t.Helper()
	need := func(err error) {
		t.Helper()
		if testtool.InCI() {
			t.Fatalf("%v, and $CI is set, so this test must run", err)
		}
		t.Skipf("SKIPPED: %v; under CI this fails", err)
	}
	for _, tool := range []string{"node", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			need(fmt.Errorf("%s is not installed: %s", tool, installPeersHint))
		}
	}
	for _, p := range pkgs {
		v, err := installedVersion(p)
		if err == nil && v != p.Version {
			err = fmt.Errorf("%s is installed in %s at %s: %s", p.Spec(), p.project(), v, installPeersHint)
		}
		if err != nil {
			need(err)
		}
	}
	base := dir()
	for i, p := range pkgs {
		if i == 0 {
			base = p.project()
		} else if p.project() != base {
			t.Fatalf("peertest: %s and %s are pinned in two npm projects: no one folder runs both", pkgs[0].Spec(), p.Spec())
		}
	}
	project, err := os.MkdirTemp(base, ".run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(project) })
	return project
}

// NpxEnv is what npx needs in a server's environment to run a pinned
// package with no registry: offline, so a package missing from
// testdata/peers fails at once (ENOTCACHED) instead of being downloaded.
func NpxEnv() map[string]string {
	return map[string]string{"npm_config_offline": "true", "npm_config_update_notifier": "false"}
}

// SlackMCPBinary is the Go binary slack-mcp-server's npm package runs on
// this platform (npm installs only the optional dependency that matches
// it), or an error saying it is not installed.
func SlackMCPBinary() (string, error) {
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	name := "slack-mcp-server-" + runtime.GOOS + "-" + arch
	bin := filepath.Join(dir(), "node_modules", name, "bin", name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s (%s) is not installed in %s: %s", SlackMCP.Spec(), name, dir(), installPeersHint)
	}
	return bin, nil
}
