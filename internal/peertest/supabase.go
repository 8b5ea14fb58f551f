package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// supabaseDocsOrigin is Supabase's documentation site. Its GraphQL
// content API (GET /docs/api/graphql?query=...) is what
// @supabase/mcp-server-supabase asks, with no credential, for the schema
// it writes into search_docs' description before it lists its tools; it
// calls it through the global fetch.
const supabaseDocsOrigin = "https://supabase.com"

// supabaseDocsSchema is a schema in the shape of the content API's: a root
// query with the schema itself and a search over the documentation.
const supabaseDocsSchema = `schema { query: RootQueryType }

type RootQueryType {
  "The GraphQL schema of this endpoint, in SDL"
  schema: String!
  "Search the Supabase documentation"
  searchDocs(query: String!, limit: Int): SearchResultCollection
}

type SearchResultCollection {
  nodes: [SearchResult!]!
  totalCount: Int!
}

interface SearchResult {
  title: String
  href: String
  content: String
}

type Guide implements SearchResult {
  title: String
  href: String
  content: String
}
`

// NewSupabaseDocs starts a stand-in of Supabase's documentation content
// API: it answers the query for its schema ({ schema }) as the API does,
// {"data": {"schema": SDL}}, and any other query with a GraphQL error.
func NewSupabaseDocs() *API {
	return newAPI("Supabase docs", supabaseDocsOrigin, func(*http.Request) string { return "" }, serveSupabaseDocs, nil)
}

func serveSupabaseDocs(w http.ResponseWriter, r *http.Request, _ verdict) {
	switch {
	case r.URL.Path != "/docs/api/graphql":
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	case r.URL.Query().Get("query") == "{ schema }":
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"schema": supabaseDocsSchema}})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"message": "this stand-in answers only { schema }", "locations": []any{map[string]any{"line": 1, "column": 1}},
		}}})
	}
}

// supabaseOrigin is Supabase's Management API, which
// @supabase/mcp-server-supabase calls with a personal access token (its
// --access-token or SUPABASE_ACCESS_TOKEN as a bearer token), through
// the global fetch.
const supabaseOrigin = "https://api.supabase.com"

// SupabaseProject is the project the Management API stand-in holds (its
// ref, as --project-ref names it).
const SupabaseProject = "abcdefghijklmnopqrst"

// The Management API's answers to a token it does not take and to a
// resource it does not have (https://supabase.com/docs/reference/api).
var (
	supabaseUnauthorized = json.RawMessage(`{"message":"Unauthorized"}`)
	supabaseNotFound     = json.RawMessage(`{"message":"Not Found"}`)
	supabaseNoWrites     = json.RawMessage(`{"message":"Forbidden resource"}`)
)

// NewSupabase starts a stand-in of Supabase's Management API holding one
// empty project (SupabaseProject), with the reads the server's read-only
// tools make: its migrations, API keys, TypeScript types, Edge Functions
// and branches, and a SQL query run read-only (a POST that only reads). As
// Supabase does, it answers 401 "Unauthorized" to a token it does not
// take.
func NewSupabase(tokens ...string) *API {
	a := newAPI("Supabase", supabaseOrigin, bearer, serveSupabase, tokens).AnswersIdentity("supabase")
	a.writes = func(r *http.Request) bool { return r.Method != http.MethodGet && !supabaseReadQuery(r) }
	return a
}

// supabaseReadQuery tells a SQL query the server asks to run read-only
// ({"query": ..., "read_only": true}): a POST that only reads.
func supabaseReadQuery(r *http.Request) bool {
	var q struct {
		ReadOnly bool `json:"read_only"`
	}
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/database/query") && peekJSON(r, &q) && q.ReadOnly
}

func serveSupabase(w http.ResponseWriter, r *http.Request, v verdict) {
	project, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/projects/"), "/")
	switch {
	case v != credValid:
		writeJSON(w, http.StatusUnauthorized, supabaseUnauthorized)
	case r.Method != http.MethodGet && !supabaseReadQuery(r):
		writeJSON(w, http.StatusForbidden, supabaseNoWrites)
	case !strings.HasPrefix(r.URL.Path, "/v1/projects/") || project != SupabaseProject:
		writeJSON(w, http.StatusNotFound, supabaseNotFound)
	case rest == "database/query":
		writeJSON(w, http.StatusCreated, []any{}) // an empty project: no rows
	case rest == "database/migrations", rest == "functions", rest == "branches":
		writeJSON(w, http.StatusOK, []any{})
	case rest == "api-keys":
		writeJSON(w, http.StatusOK, []any{map[string]any{
			"name": "anon", "api_key": "sb_publishable_0123456789abcdefghijkl_0123abcd", "type": "publishable",
			"id": "6c8d4a9e-0000-4000-8000-000000000001", "description": "default publishable key",
		}})
	case rest == "types/typescript":
		writeJSON(w, http.StatusOK, map[string]any{"types": "export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]\n"})
	default:
		writeJSON(w, http.StatusNotFound, supabaseNotFound)
	}
}
