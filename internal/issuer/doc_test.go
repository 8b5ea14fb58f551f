package issuer

import (
	"flag"
	"net/url"
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
			if err := os.WriteFile(path, []byte(text[:i+len(tableBegin)]+want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's catalogue table is not the catalogue's; run go test ./internal/issuer -run TestCredentialsDocTable -update\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// Table is the catalogue as a Markdown table: service, the credential's
// names (a companion's first beside it), the request (where it goes, how
// the credential is sent, the settings that move it), where the expiry is
// told, and the documentation.
func Table() string {
	var b strings.Builder
	b.WriteString("| service | credential | request | expiry | docs |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range Catalogue() {
		cred := "`" + strings.Join(s.Credentials[0].Names, "`, `") + "`"
		for _, c := range s.Credentials[1:] {
			cred += " with `" + c.Names[0] + "`"
		}
		b.WriteString("| " + s.Service + " | " + cred + " | " + strings.ReplaceAll(request(s), "|", "\\|") + " | " + expiryCell(s) + " | [docs](" + s.Docs + ") |\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// request is where a service's check goes and how the credential is sent.
func request(s *Service) string {
	var settings []string
	for _, st := range s.Base.Settings {
		settings = append(settings, "`"+st.Env+st.Arg+"`")
	}
	var where string
	if s.Base.URL == "" {
		where = "the site in " + orList(settings) + ": `" + s.Request.Method + " " + s.Request.Path + "`"
	} else {
		u, _ := url.Parse(s.Base.URL)
		where = "`" + u.Host + " " + s.Request.Method + " " + strings.TrimRight(u.Path, "/") + s.Request.Path + "`"
	}
	role := func(t string) string {
		return patterns().template.ReplaceAllStringFunc(t, func(m string) string { return strings.ToUpper(m[1 : len(m)-1]) })
	}
	var sent []string
	for _, k := range sortedKeys(s.Request.Headers) {
		if v := s.Request.Headers[k]; patterns().template.MatchString(v) {
			sent = append(sent, "`"+k+": "+role(v)+"`")
		}
	}
	if len(s.Request.Basic) == 2 {
		sent = append(sent, "basic auth "+strings.Trim(s.Request.Basic[0], "{}")+":"+strings.Trim(s.Request.Basic[1], "{}"))
	}
	for _, k := range sortedKeys(s.Request.Query) {
		if patterns().template.MatchString(s.Request.Query[k]) {
			sent = append(sent, "query `"+k+"`")
		}
	}
	if len(s.Request.JSON) > 0 {
		sent = append(sent, "JSON body")
	}
	if patterns().template.MatchString(s.Request.Path) {
		sent = append(sent, "path")
	}
	out := where + "; " + strings.Join(sent, ", ")
	if s.Base.URL != "" && len(settings) > 0 {
		out += "; moved by " + strings.Join(settings, ", ")
	}
	return out
}

func expiryCell(s *Service) string {
	switch {
	case s.Expiry == nil:
		return "not told"
	case s.Expiry.Header != "":
		return "header `" + s.Expiry.Header + "`"
	}
	return "`" + s.Expiry.JSON + "` in the answer"
}

// orList is "A", "A or B", "A, B or C".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
