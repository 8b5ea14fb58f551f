package issuer

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every file of services/ parses and keeps the catalogue's rules (check),
// and the catalogue is as large as docs/credentials.md says.
func TestCatalogueLoads(t *testing.T) {
	services := Catalogue()
	if len(services) == 0 {
		t.Fatal("an empty catalogue")
	}
	for _, s := range services {
		if got, ok := Lookup(s.ID); !ok || got != s {
			t.Errorf("Lookup(%q) does not find it", s.ID)
		}
	}
}

// The rules refuse what would send a credential where it must not go, or
// could never judge it.
func TestCatalogueRules(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("services", "github.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"plain http base":        {`"url": "https://api.github.com"`, `"url": "http://api.github.com"`},
		"unknown key":            {`"service": "GitHub"`, `"service": "GitHub", "extra": 1`},
		"template of no role":    {`"Bearer {token}"`, `"Bearer {key}"`},
		"a write method":         {`"method": "GET"`, `"method": "DELETE"`},
		"no rejection":           {`{"status": [401], "verdict": "rejected"}`, `{"status": [401], "verdict": "accepted"}`},
		"bad format":             {`"ghp_[A-Za-z0-9]{36}"`, `"ghp_[A-Za-z0-9"`},
		"http docs":              {`"docs": "https://`, `"docs": "http://`},
		"expiry of no layout":    {`"layout": "2006-01-02 15:04:05 MST"`, `"layout": "soon"`},
		"credential never sent":  {`"Bearer {token}"`, `"Bearer x"`},
		"setting of env and arg": {`{"env": "GITHUB_API_URL"}`, `{"env": "GITHUB_API_URL", "arg": "--api-url"}`},
		"setting of neither":     {`{"env": "GITHUB_API_URL"}`, `{"base": "{url}"}`},
		"flag without dashes":    {`{"env": "GITHUB_API_URL"}`, `{"arg": "api-url"}`},
		"value of a plain base":  {`{"env": "GITHUB_API_URL"}`, `{"env": "GITHUB_API_URL", "values": {"ghe": "http://ghe.example.com"}}`},
		"values and a base":      {`{"env": "GITHUB_API_URL"}`, `{"env": "GITHUB_API_URL", "base": "{url}", "values": {"ghe": "https://ghe.example.com"}}`},
	} {
		bad := strings.Replace(string(good), edit[0], edit[1], 1)
		if bad == string(good) {
			t.Fatalf("%s: the edit does not apply", name)
		}
		if _, err := parseService([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseService(good); err != nil {
		t.Fatalf("github.json: %v", err)
	}
	// A service with no one origin (a customer's own site) takes its base
	// from the server's settings alone; with neither, a credential would
	// have nowhere to go.
	siteOnly := strings.Replace(string(good), `"url": "https://api.github.com",`, `"url": "",`, 1)
	if _, err := parseService([]byte(siteOnly)); err != nil {
		t.Errorf("a base named only by settings: %v", err)
	}
	nowhere := regexp.MustCompile(`(?s)"base": \{.*?\]\s*\}`).ReplaceAllString(string(good), `"base": {"url": ""}`)
	if nowhere == string(good) {
		t.Fatal("nowhere to send it: the edit does not apply")
	}
	if _, err := parseService([]byte(nowhere)); err == nil {
		t.Errorf("nowhere to send it: accepted")
	}
}
