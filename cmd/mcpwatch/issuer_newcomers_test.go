//go:build e2e

package main

import (
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// issuerNewcomer is s, a server of the issuer catalogue's service id, with
// a good and a fake credential in the service's format (its documented
// answers' samples), and, unless s has its own, a stand-in of the
// service's identity endpoint at its documented base: for a server that
// calls nothing of its service at start, to list its tools or for the
// read-only tools init tries (any other request fails the test).
func issuerNewcomer(id string, s newcomerServer) newcomerServer {
	ans, err := peertest.LoadAnswers(id)
	if err != nil {
		panic(err) // the catalogue's documented answers are the test's fixtures
	}
	s.good, s.fake = ans.Credentials["token"].Good, ans.Credentials["token"].Fake
	if s.apis == nil {
		s.apis = issuerStandIn(id, "", nil)
	}
	return s
}

// issuerNewcomers are ten credentialed npm servers of services the issuer
// catalogue covers, among the most installed (npm's monthly downloads),
// that run on Node 20, each in the .mcp.json entry its README shows.
func issuerNewcomers() []newcomerServer {
	return []newcomerServer{
		// It asks Supabase's documentation API for the schema it writes
		// into a tool's description before it lists its tools; its
		// read-only tools read the project's Management API.
		issuerNewcomer("supabase", newcomerServer{name: "supabase", pkg: peertest.SupabaseMCP,
			args: []string{"--read-only", "--project-ref=" + peertest.SupabaseProject}, env: map[string]string{"SUPABASE_ACCESS_TOKEN": "${SUPABASE_ACCESS_TOKEN}"},
			variable: "SUPABASE_ACCESS_TOKEN", apis: func(good string) []*peertest.API {
				return []*peertest.API{peertest.NewSupabase(good), peertest.NewSupabaseDocs()}
			}}),
		issuerNewcomer("circleci", newcomerServer{name: "circleci-mcp-server", pkg: peertest.CircleCIMCP,
			env:      map[string]string{"CIRCLECI_TOKEN": "${CIRCLECI_TOKEN}", "CIRCLECI_BASE_URL": "https://circleci.com", "MAX_MCP_OUTPUT_LENGTH": "50000"},
			variable: "CIRCLECI_TOKEN"}),
		issuerNewcomer("tavily", newcomerServer{name: "tavily-mcp", pkg: peertest.TavilyMCP,
			env: map[string]string{"TAVILY_API_KEY": "${TAVILY_API_KEY}"}, variable: "TAVILY_API_KEY"}),
		// Its API client is undici's own fetch, which the Node preload
		// does not reach: its documented proxy and CA settings send it
		// through peertest.Proxy. Its read-only tools read the API.
		issuerNewcomer("gitlab", newcomerServer{name: "gitlab", pkg: peertest.GitLabMCP, apis: standIn(peertest.NewGitLab),
			env:      map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": "${GITLAB_PERSONAL_ACCESS_TOKEN}", "GITLAB_API_URL": "https://gitlab.com/api/v4"},
			variable: "GITLAB_PERSONAL_ACCESS_TOKEN", proxyEnv: func(proxy, ca string) map[string]string {
				return map[string]string{"HTTPS_PROXY": proxy, "GITLAB_CA_CERT_PATH": ca}
			}}),
		// The key in an argument, tied to LaunchDarkly by the package.
		issuerNewcomer("launchdarkly", newcomerServer{name: "LaunchDarkly", pkg: peertest.LaunchDarklyMCP, bin: "mcp",
			args: []string{"start", "--api-key", "${LAUNCHDARKLY_API_KEY}"}, variable: "LAUNCHDARKLY_API_KEY"}),
		// The README's name has spaces; its read-only tool reads a file.
		issuerNewcomer("figma", newcomerServer{name: "Framelink MCP for Figma", pkg: peertest.FigmaMCP, apis: standIn(peertest.NewFigma),
			args: []string{"--figma-api-key=${FIGMA_API_KEY}", "--stdio"}, variable: "FIGMA_API_KEY"}),
		// It needs an application key besides the API key that the
		// issuer checks.
		issuerNewcomer("datadog", newcomerServer{name: "mcp-server-datadog", pkg: peertest.DatadogMCP,
			env:        map[string]string{"DATADOG_API_KEY": "${DATADOG_API_KEY}", "DATADOG_APP_KEY": "${DATADOG_APP_KEY}"},
			variable:   "DATADOG_API_KEY",
			companions: map[string]string{"DATADOG_APP_KEY": "0123456789abcdef0123456789abcdef01234567"}}),
		issuerNewcomer("hubspot", newcomerServer{name: "hubspot", pkg: peertest.HubSpotMCP,
			env: map[string]string{"PRIVATE_APP_ACCESS_TOKEN": "${PRIVATE_APP_ACCESS_TOKEN}"}, variable: "PRIVATE_APP_ACCESS_TOKEN"}),
		// A customer's own site, named by the server's setting.
		issuerNewcomer("jira", newcomerServer{name: "jira", pkg: peertest.JiraMCP,
			env:      map[string]string{"ATLASSIAN_SITE_NAME": "acme", "ATLASSIAN_USER_EMAIL": "person@example.com", "ATLASSIAN_API_TOKEN": "${ATLASSIAN_API_TOKEN}"},
			variable: "ATLASSIAN_API_TOKEN", apis: issuerStandIn("jira", "https://acme.atlassian.net", nil)}),
		issuerNewcomer("pinecone", newcomerServer{name: "pinecone", pkg: peertest.PineconeMCP,
			env: map[string]string{"PINECONE_API_KEY": "${PINECONE_API_KEY}"}, variable: "PINECONE_API_KEY"}),
	}
}

// TestIssuerNewcomers is the acceptance of the issuer check on servers
// its catalogue covers that no other test runs: for each of ten, a plain
// .mcp.json as its README shows it and `mcpwatch init` with the credential
// that works, then `mcpwatch check` with it (exit 0), with a fake one of
// the service's format (exit 78, credential_rejected naming the
// credential, found by the check at its issuer with no tool called), and
// with the service unreachable (never credential_rejected). No request
// leaves loopback.
func TestIssuerNewcomers(t *testing.T) {
	t.Parallel()
	runNewcomers(t, "ten servers the issuer catalogue covers", issuerNewcomers(), true)
}
