package issuer

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/credentials.md's catalogue table from the catalogue")

const (
	tableBegin = "<!-- catalogue:begin -->"
	tableEnd   = "<!-- catalogue:end -->"
)

// docs/credentials.md's table is the catalogue's, one row a service: a
// change of a service file that the page does not follow fails here (go
// test ./internal/issuer -run TestCredentialsDocTable -update rewrites it).
func TestCredentialsDocTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "credentials.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	i, j := strings.Index(text, tableBegin), strings.Index(text, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s", path, tableBegin, tableEnd)
	}
	want := "\n" + Table() + "\n"
	if got := text[i+len(tableBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(text[:i+len(tableBegin)]+want+text[j:]), 0o644); err != nil { //nolint:gosec // G306: a document of the repository
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's catalogue table is not the catalogue's; run go test ./internal/issuer -run TestCredentialsDocTable -update\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// Table is the catalogue as a Markdown table: service, the credential's
// names, the request (host, method, path, and what is sent), where the
// expiry is told, and the documentation.
func Table() string {
	var b strings.Builder
	b.WriteString("| service | credential | request | expiry | docs |\n|---|---|---|---|---|\n")
	for _, s := range Catalogue() {
		var names []string
		for _, c := range s.Credentials {
			names = append(names, "`"+strings.Join(c.Names, "`, `")+"`")
		}
		host := strings.TrimPrefix(s.Base.URL, "https://")
		req := "`" + host + " " + s.Request.Method + " " + s.Request.Path + "`"
		var sent []string
		for _, k := range sortedKeys(s.Request.Headers) {
			if strings.Contains(s.Request.Headers[k], "{") {
				sent = append(sent, "`"+k+": "+s.Request.Headers[k]+"`")
			}
		}
		if len(s.Request.Basic) == 2 {
			sent = append(sent, "basic auth `"+s.Request.Basic[0]+":"+s.Request.Basic[1]+"`")
		}
		for _, k := range sortedKeys(s.Request.Query) {
			sent = append(sent, "query `"+k+"="+s.Request.Query[k]+"`")
		}
		if strings.Contains(s.Request.Path, "{") {
			sent = append(sent, "in the path")
		}
		if len(s.Request.JSON) > 0 {
			sent = append(sent, "JSON `"+string(s.Request.JSON)+"`")
		}
		if len(sent) > 0 {
			req += ", " + strings.Join(sent, ", ")
		}
		if len(s.Base.Settings) > 0 {
			var envs []string
			for _, st := range s.Base.Settings {
				envs = append(envs, "`"+st.Env+"`")
			}
			req += "; base moved by " + strings.Join(envs, ", ")
		}
		expiry := "not told"
		switch {
		case s.Expiry != nil && s.Expiry.Header != "":
			expiry = "header `" + s.Expiry.Header + "`"
		case s.Expiry != nil:
			expiry = "`" + s.Expiry.JSON + "`"
		}
		b.WriteString("| " + s.Service + " | " + strings.Join(names, "; ") + " | " + strings.ReplaceAll(req, "|", "\\|") + " | " + expiry + " | [docs](" + s.Docs + ") |\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
