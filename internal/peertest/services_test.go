package peertest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// TestServiceStandIns asks the stand-ins of GitLab's, Supabase's and Figma's APIs
// what their servers' read-only tools ask, as the services' API
// references answer: the data to a good token, the documented 401 to a
// fake one, and a POST that only reads (a GraphQL query, a SQL query run
// read-only) counted as no write, while one that would write is refused
// and counted.
func TestServiceStandIns(t *testing.T) {
	t.Parallel()
	const gitlabGood, supabaseGood = "glpat-0123456789abcdefghij", "sbp_0123456789abcdef0123456789abcdef01234567"
	gitlab := peertest.NewGitLab(gitlabGood)
	defer gitlab.Close()
	supabase := peertest.NewSupabase(supabaseGood)
	defer supabase.Close()
	docs := peertest.NewSupabaseDocs()
	defer docs.Close()
	const figmaGood = "figd_0123456789abcdefghijABCDEFGHIJklmnopqrstKLM"
	figma := peertest.NewFigma(figmaGood)
	defer figma.Close()
	project := "/v1/projects/" + peertest.SupabaseProject

	for _, tc := range []struct {
		name                 string
		api                  *peertest.API
		method, path, header string
		token, body          string
		status               int
		want                 string
		write                bool
	}{
		{"gitlab identity", gitlab, "GET", "/api/v4/personal_access_tokens/self", "PRIVATE-TOKEN", gitlabGood, "", 200, `"active": true`, false},
		{"gitlab user", gitlab, "GET", "/api/v4/user", "PRIVATE-TOKEN", gitlabGood, "", 200, `"username":"canary"`, false},
		{"gitlab user, fake token", gitlab, "GET", "/api/v4/user", "PRIVATE-TOKEN", "glpat-zyxwvutsrq9876543210", "", 401, `{"message":"401 Unauthorized"}`, false},
		{"gitlab issues, bearer", gitlab, "GET", "/api/v4/issues", "Authorization", "Bearer " + gitlabGood, "", 200, `[]`, false},
		{"gitlab unknown project", gitlab, "GET", "/api/v4/projects/mcpwatch/merge_requests/1/approvals", "PRIVATE-TOKEN", gitlabGood, "", 404, `404 Project Not Found`, false},
		{"gitlab graphql query", gitlab, "POST", "/api/graphql", "PRIVATE-TOKEN", gitlabGood, `{"query":"query { currentUser { id } }"}`, 200, `"data":null`, false},
		{"gitlab graphql mutation", gitlab, "POST", "/api/graphql", "PRIVATE-TOKEN", gitlabGood, `{"query":"mutation { createIssue { id } }"}`, 403, `403 Forbidden`, true},
		{"supabase identity", supabase, "GET", "/v1/projects", "Authorization", "Bearer " + supabaseGood, "", 200, peertest.SupabaseProject, false},
		{"supabase migrations", supabase, "GET", project + "/database/migrations", "Authorization", "Bearer " + supabaseGood, "", 200, `[]`, false},
		{"supabase migrations, fake token", supabase, "GET", project + "/database/migrations", "Authorization", "Bearer sbp_fedcba9876543210fedcba9876543210fedcba98", "", 401, `{"message":"Unauthorized"}`, false},
		{"supabase read-only query", supabase, "POST", project + "/database/query", "Authorization", "Bearer " + supabaseGood, `{"query":"select 1","read_only":true}`, 201, `[]`, false},
		{"supabase query that may write", supabase, "POST", project + "/database/query", "Authorization", "Bearer " + supabaseGood, `{"query":"drop table x"}`, 403, `Forbidden`, true},
		{"supabase another project", supabase, "GET", "/v1/projects/zzzzzzzzzzzzzzzzzzzz/functions", "Authorization", "Bearer " + supabaseGood, "", 404, `Not Found`, false},
		{"figma identity", figma, "GET", "/v1/me", "X-Figma-Token", figmaGood, "", 200, `"handle"`, false},
		{"figma file", figma, "GET", "/v1/files/mcpwatch", "X-Figma-Token", figmaGood, "", 404, `{"status":404,"err":"Not found"}`, false},
		{"figma file, fake token", figma, "GET", "/v1/files/mcpwatch", "X-Figma-Token", "figd_TSRQPONMLKtsrqponmlkJIHGFEDCBAjihgfedcba987", "", 403, `"err":"Invalid token"`, false},
		{"supabase docs schema", docs, "GET", "/docs/api/graphql?query=%7B+schema+%7D", "", "", "", 200, `searchDocs(query: String!`, false},
	} {
		writes := tc.api.Writes()
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		req, err := http.NewRequest(tc.method, tc.api.URL()+tc.path, body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			req.Header.Set(tc.header, tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, resp.StatusCode, got, tc.status, tc.want)
		}
		if wrote := tc.api.Writes() > writes; wrote != tc.write {
			t.Errorf("%s: counted as a write: %v, want %v", tc.name, wrote, tc.write)
		}
	}
	if gitlab.IdentityRequests() != 1 || supabase.IdentityRequests() != 1 {
		t.Errorf("identity requests: GitLab %d, Supabase %d, want 1 each", gitlab.IdentityRequests(), supabase.IdentityRequests())
	}
}
