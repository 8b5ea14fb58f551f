package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/registry/registrytest"
)

func remoteServer(i int) map[string]any {
	return map[string]any{
		"$schema":     "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		"name":        fmt.Sprintf("io.example.fleet/server-%03d", i),
		"description": "a server of the fleet",
		"version":     "1.0.0",
		"remotes":     []any{map[string]any{"type": "streamable-http", "url": fmt.Sprintf("https://mcp.example.com/%03d/mcp", i)}},
	}
}

func TestMirrorSyncPagesAndIncremental(t *testing.T) {
	reg := registrytest.New(t)
	reg.MaxPage = 200
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 500 {
		reg.Put(remoteServer(i), t0.Add(time.Duration(i)*time.Second))
	}
	m, err := NewMirror(reg.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.PageSize = 200
	ctx := context.Background()

	st, err := m.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (SyncStats{Pages: 3, Read: 500, Added: 500}); st != want {
		t.Errorf("first sync: %+v, want %+v", st, want)
	}
	if n := len(m.Entries()); n != 500 {
		t.Fatalf("%d entries, want 500", n)
	}

	// One deleted, one added: a reload asks for what changed since the
	// newest update seen, and gets both.
	last := t0.Add(499 * time.Second)
	reg.Delete("io.example.fleet/server-042", last.Add(time.Minute))
	reg.Put(remoteServer(500), last.Add(2*time.Minute))
	st, err = m.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (SyncStats{Incremental: true, Pages: 1, Read: 2, Added: 1, Removed: 1}); st != want {
		t.Errorf("incremental sync: %+v, want %+v", st, want)
	}
	reqs := reg.Requests()
	if got := reqs[len(reqs)-1].Get("updated_since"); got != last.Format(time.RFC3339Nano) {
		t.Errorf("updated_since=%q, want %q", got, last.Format(time.RFC3339Nano))
	}
	for _, q := range reqs {
		if q.Get("version") != "latest" || q.Get("limit") != "200" {
			t.Errorf("request %v: want version=latest and limit=200", q)
		}
	}
	names := map[string]bool{}
	for _, e := range m.Entries() {
		names[e.Name] = true
	}
	if len(names) != 500 || names["io.example.fleet/server-042"] || !names["io.example.fleet/server-500"] {
		t.Errorf("after the reload: %d entries, 042 present %v, 500 present %v", len(names), names["io.example.fleet/server-042"], names["io.example.fleet/server-500"])
	}

	// Nothing changed: one empty page, nothing changes.
	st, err = m.Sync(ctx)
	if err != nil || st != (SyncStats{Incremental: true, Pages: 1}) {
		t.Errorf("idle sync: %+v, %v", st, err)
	}
}

func TestMirrorErrorsKeepTheEntries(t *testing.T) {
	reg := registrytest.New(t)
	reg.Put(remoteServer(1), time.Now())
	m, _ := NewMirror(reg.URL+"/v0.1", nil)
	if _, err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg.Close()
	_, err := m.Sync(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), reg.URL+"/v0.1/servers: ") {
		t.Errorf("error %v, want one naming the endpoint", err)
	}
	if len(m.Entries()) != 1 {
		t.Errorf("a failed sync dropped the entries")
	}

	reg2 := registrytest.New(t)
	bad2, _ := NewMirror(reg2.URL+"/api/servers", nil)
	if _, err := bad2.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "answered HTTP 404; is it the URL of a registry API?") {
		t.Errorf("got %v", err)
	}
	if _, err := NewMirror("ftp://registry.example.com", nil); err == nil {
		t.Error("an ftp URL is accepted")
	}
}

func TestNewMirrorEndpoint(t *testing.T) {
	cases := map[string]string{
		"https://registry.modelcontextprotocol.io":             "https://registry.modelcontextprotocol.io/v0.1/servers",
		"https://registry.modelcontextprotocol.io/":            "https://registry.modelcontextprotocol.io/v0.1/servers",
		"https://registry.modelcontextprotocol.io/v0":          "https://registry.modelcontextprotocol.io/v0/servers",
		"https://registry.example.com/mcp/v0.1/servers?x=1":    "https://registry.example.com/mcp/v0.1/servers",
		"http://127.0.0.1:8080/internal-registry/v0.1/servers": "http://127.0.0.1:8080/internal-registry/v0.1/servers",
	}
	for in, want := range cases {
		m, err := NewMirror(in, nil)
		if err != nil || m.Endpoint() != want {
			t.Errorf("NewMirror(%q): %v, %v; want %s", in, m.Endpoint(), err, want)
		}
	}
}

func TestDefs(t *testing.T) {
	entries := []Entry{
		{Name: "com.example/acme-analytics", Remotes: []Remote{
			{Type: "streamable-http", URL: "https://{tenant_id}.api.example.com/mcp",
				Variables: map[string]Input{"tenant_id": {Required: true}},
				Headers: []Input{
					{Name: "Authorization", Value: "Bearer {api_key}", Variables: map[string]Input{"api_key": {Secret: true, Default: "leaked-default"}}},
					{Name: "X-Region", Default: "eu"},
					{Name: "X-Api-Key", Secret: true, Value: "sk-literal-in-the-registry"},
					{Name: "X-Optional"},
				}},
			{Type: "sse", URL: "https://api.example.com/sse?price=$5"},
		}},
		{Name: "io.github.someone/weather", Packages: []Package{{RegistryType: "npm", Identifier: "@someone/weather-mcp", Version: "1.2.3", Transport: "stdio",
			PackageArgs: []Input{{Type: "named", Name: "--units", Default: "metric"}, {Type: "positional", ValueHint: "city", Required: true}},
			Env:         []Input{{Name: "WEATHER_API_KEY", Required: true, Secret: true}}}}},
		{Name: "io.github.someone/box", Packages: []Package{{RegistryType: "oci", Identifier: "ghcr.io/someone/box", Version: "v2", Transport: "stdio",
			Env: []Input{{Name: "BOX_TOKEN", Secret: true}}}}},
		{Name: "io.github.someone/bundle", Packages: []Package{{RegistryType: "mcpb", Identifier: "https://example.com/x.mcpb"}}},
	}

	defs, skipped := Defs(entries, Options{})
	got := map[string]map[string]any{}
	for _, d := range defs {
		got[d.Name] = d.Spec
	}
	want := map[string]map[string]any{
		"com.example/acme-analytics@streamable-http": {"type": "http", "url": "https://${COM_EXAMPLE_ACME_ANALYTICS_20BDF7A4027D_TENANT_ID}.api.example.com/mcp",
			"headers": map[string]any{
				"Authorization": "Bearer ${COM_EXAMPLE_ACME_ANALYTICS_20BDF7A4027D_API_KEY}", // secret: the default is never used
				"X-Region":      "${COM_EXAMPLE_ACME_ANALYTICS_20BDF7A4027D_X_REGION:-eu}",
				"X-Api-Key":     "${COM_EXAMPLE_ACME_ANALYTICS_20BDF7A4027D_X_API_KEY}", // secret: its literal value is never used
			}},
		"com.example/acme-analytics@sse": {"type": "sse", "url": "https://api.example.com/sse?price=$$5"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("without packages:\n got: %v\nwant: %v", got, want)
	}
	if len(skipped) != 3 || !strings.Contains(skipped[0].Reason, "imported only with packages: true") {
		t.Errorf("skipped: %+v", skipped)
	}

	defs, skipped = Defs(entries, Options{Packages: true})
	got = map[string]map[string]any{}
	for _, d := range defs {
		got[d.Name] = d.Spec
	}
	if w := (map[string]any{"command": "npx", "args": []any{"-y", "@someone/weather-mcp@1.2.3", "--units=${IO_GITHUB_SOMEONE_WEATHER_EA8D3D7866F4_UNITS:-metric}", "${IO_GITHUB_SOMEONE_WEATHER_EA8D3D7866F4_CITY}"},
		"env": map[string]any{"WEATHER_API_KEY": "${IO_GITHUB_SOMEONE_WEATHER_EA8D3D7866F4_WEATHER_API_KEY}"}}); !reflect.DeepEqual(got["io.github.someone/weather"], w) {
		t.Errorf("npm:\n got: %v\nwant: %v", got["io.github.someone/weather"], w)
	}
	if w := (map[string]any{"command": "docker", "args": []any{"run", "-i", "--rm", "-e", "BOX_TOKEN", "ghcr.io/someone/box:v2"},
		"env": map[string]any{"BOX_TOKEN": "${IO_GITHUB_SOMEONE_BOX_2EC084D48FAE_BOX_TOKEN}"}}); !reflect.DeepEqual(got["io.github.someone/box"], w) {
		t.Errorf("oci:\n got: %v\nwant: %v", got["io.github.someone/box"], w)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "a mcpb package, which mcpwatch cannot start") {
		t.Errorf("skipped: %+v", skipped)
	}
	for _, d := range defs {
		if strings.Contains(fmt.Sprint(d.Spec), "leaked-default") || strings.Contains(fmt.Sprint(d.Spec), "sk-literal") {
			t.Errorf("%s: a secret value from the registry is used: %v", d.Name, d.Spec)
		}
	}
}

// Every published version of server.json reads the same.
func TestReadFileSchemaVersions(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// 2025-07-09: snake_case, version_detail, the registry's metadata in
		// the server's _meta.
		"2025-07-09.json": `{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json",
			"name": "io.example/s", "description": "d", "version_detail": {"version": "1.0.0"},
			"remotes": [{"type": "streamable-http", "url": "https://s.example.com/mcp",
				"headers": [{"name": "X-Key", "is_required": true, "is_secret": true}]}],
			"_meta": {"io.modelcontextprotocol.registry": {"updated_at": "2025-08-01T00:00:00Z", "is_latest": true}}}`,
		// 2025-09-29: camelCase, a saved API answer.
		"2025-09-29.json": `{"servers": [{"server": {"$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
			"name": "io.example/s", "description": "d", "version": "1.0.0",
			"remotes": [{"type": "streamable-http", "url": "https://s.example.com/mcp",
				"headers": [{"name": "X-Key", "isRequired": true, "isSecret": true}]}]},
			"_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "updatedAt": "2025-10-01T00:00:00Z", "isLatest": true}}},
			{"server": {"name": "io.example/gone", "description": "d", "version": "1.0.0",
				"remotes": [{"type": "sse", "url": "https://gone.example.com/sse"}]},
			"_meta": {"io.modelcontextprotocol.registry/official": {"status": "deleted"}}}], "metadata": {"count": 2}}`,
		// 2025-12-11: a list of server.json, with URL variables.
		"2025-12-11.json": `[{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
			"name": "io.example/s", "description": "d", "version": "1.0.0",
			"remotes": [{"type": "streamable-http", "url": "https://{host}/mcp", "variables": {"host": {"value": "s.example.com"}},
				"headers": [{"name": "X-Key", "isRequired": true, "isSecret": true}]}]}]`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		entries, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defs, _ := Defs(entries, Options{})
		want := []Def{{Name: "io.example/s", Entry: "io.example/s", Kind: "streamable-http",
			Spec: map[string]any{"type": "http", "url": "https://s.example.com/mcp", "headers": map[string]any{"X-Key": "${IO_EXAMPLE_S_035495DBE7FA_X_KEY}"}},
			Vars: []string{"IO_EXAMPLE_S_035495DBE7FA_X_KEY"}}}
		if !reflect.DeepEqual(defs, want) {
			t.Errorf("%s:\n got: %+v\nwant: %+v", name, defs, want)
		}
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"description": "no name", "token": "ghp_secret"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || err.Error() != "entry 0 has no name; every server.json has one" {
		t.Errorf("got %v", err)
	}
}

// Two publishers whose names and inputs upper-case to the same words get
// variables of their own; one variable that would still feed two hosts is
// refused.
func TestVariablesInjective(t *testing.T) {
	remote := func(name, host, header string) Entry {
		return Entry{Name: name, Remotes: []Remote{{Type: "streamable-http", URL: "https://" + host + "/mcp",
			Headers: []Input{{Name: header, Required: true, Secret: true}}}}}
	}
	defs, skipped := Defs([]Entry{
		remote("io.github.acme/weather", "weather.acme.example", "X-API-Key"),
		remote("io.github.acme-weather/x", "evil.example", "API-Key"),
	}, Options{})
	if len(defs) != 2 || len(skipped) != 0 {
		t.Fatalf("defs %v, skipped %v", defs, skipped)
	}
	if defs[0].Vars[0] == defs[1].Vars[0] {
		t.Errorf("both publishers' servers read ${%s}: one's key would go to the other", defs[0].Vars[0])
	}

	two := Entry{Name: "io.x/s", Remotes: []Remote{
		{Type: "streamable-http", URL: "https://a.example/mcp", Headers: []Input{{Name: "X-Key", Required: true, Secret: true}}},
		{Type: "sse", URL: "https://b.example/sse", Headers: []Input{{Name: "X-Key", Required: true, Secret: true}}},
	}}
	defs, _ = Defs([]Entry{two}, Options{})
	if len(defs) != 2 || defs[0].Vars[0] == defs[1].Vars[0] {
		t.Errorf("one entry's two hosts: %+v; want a variable each", defs)
	}

	// Should two names still meet (a hash collision), the variable that
	// would feed two hosts is refused.
	shared := []Def{
		{Name: "a", Entry: "a", Spec: map[string]any{"url": "https://a.example/mcp"}, Vars: []string{"V"}},
		{Name: "b", Entry: "b", Spec: map[string]any{"url": "https://b.example/mcp"}, Vars: []string{"V"}},
		{Name: "c", Entry: "c", Spec: map[string]any{"url": "https://a.example/other"}, Vars: []string{"W"}},
	}
	kept, skipped := refuseShared(shared, nil)
	if len(kept) != 1 || kept[0].Name != "c" || len(skipped) != 2 || !skipped[0].Refused || !strings.Contains(skipped[0].Reason, "different hosts") {
		t.Errorf("one variable feeding two hosts: kept %v, skipped %+v; want both refused", kept, skipped)
	}
}

// packages: true runs the package with its own runtime and a short list of
// runtime arguments: a runtimeHint of another program, docker's
// --privileged or a mount of the host, or an identifier read as an option
// is refused.
func TestPackagesRefuseOtherPrograms(t *testing.T) {
	named := func(name, value string) Input { return Input{Type: "named", Name: name, Value: value} }
	cases := map[string]Package{
		"runtimeHint /bin/sh": {RegistryType: "npm", Identifier: "x", RuntimeHint: "/bin/sh"},
		"runtimeHint bash":    {RegistryType: "pypi", Identifier: "x", RuntimeHint: "bash"},
		"docker hint for npm": {RegistryType: "npm", Identifier: "x", RuntimeHint: "docker"},
		"--privileged":        {RegistryType: "oci", Identifier: "img", RuntimeArgs: []Input{named("--privileged", "")}},
		"-v=/:/host":          {RegistryType: "oci", Identifier: "img", RuntimeArgs: []Input{named("-v", "/:/host")}},
		"--pid=host":          {RegistryType: "oci", Identifier: "img", RuntimeArgs: []Input{named("--pid", "host")}},
		"positional":          {RegistryType: "oci", Identifier: "img", RuntimeArgs: []Input{{Type: "positional", Value: "--privileged"}}},
		"npx --call":          {RegistryType: "npm", Identifier: "x", RuntimeArgs: []Input{named("--call", "sh -c id")}},
		"identifier option":   {RegistryType: "npm", Identifier: "--call=id"},
	}
	for name, p := range cases {
		defs, skipped := Defs([]Entry{{Name: "io.x/" + name, Packages: []Package{p}}}, Options{Packages: true})
		if len(defs) != 0 || len(skipped) != 1 {
			t.Errorf("%s: defs %+v; want it refused", name, defs)
		}
	}
	ok := Package{RegistryType: "oci", Identifier: "img", RuntimeHint: "podman", RuntimeArgs: []Input{named("--init", ""), named("-e", "MODE=ro")}}
	defs, skipped := Defs([]Entry{{Name: "io.x/ok", Packages: []Package{ok}}}, Options{Packages: true})
	if len(defs) != 1 || len(skipped) != 0 || defs[0].Spec["command"] != "podman" {
		t.Errorf("an allowed runtime and arguments: defs %+v, skipped %+v", defs, skipped)
	}
}
