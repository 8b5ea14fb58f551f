package deploy_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

const unitFile = "systemd/mcpwatch.service"

// parseUnit reads a systemd unit into section -> key -> values (a key may
// repeat, as SystemCallFilter does).
func parseUnit(t *testing.T, b []byte) map[string]map[string][]string {
	t.Helper()
	unit := map[string]map[string][]string{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			unit[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not key=value in a section: %q", unitFile, n, line)
			}
			unit[section][key] = append(unit[section][key], value)
		}
	}
	return unit
}

func TestSystemdUnitHardening(t *testing.T) {
	svc := parseUnit(t, readFile(t, unitFile))["Service"]
	want := map[string]string{
		"ExecStart":               "/usr/local/bin/mcpwatch serve --config.file=/etc/mcpwatch/mcpwatch.yml --web.listen-address=127.0.0.1:9713",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"Restart":                 "on-failure",
		"User":                    "mcpwatch",
		"Group":                   "mcpwatch",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"StateDirectory":          "mcpwatch",
		"ConfigurationDirectory":  "mcpwatch",
		"CapabilityBoundingSet":   "",
		"RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
	}
	for key, value := range want {
		if got := svc[key]; !slices.Contains(got, value) {
			t.Errorf("[Service] %s = %q, want %q", key, got, value)
		}
	}
	if !slices.Contains(svc["SystemCallFilter"], "@system-service") {
		t.Errorf("[Service] SystemCallFilter = %q, want @system-service among them", svc["SystemCallFilter"])
	}
}

func TestSystemdSysusers(t *testing.T) {
	b := string(readFile(t, "systemd/mcpwatch.sysusers"))
	if !strings.Contains(b, "\nu mcpwatch ") {
		t.Errorf("systemd/mcpwatch.sysusers does not create the user mcpwatch:\n%s", b)
	}
}

// TestSystemdAnalyzeVerify runs `systemd-analyze verify` on the unit. It
// checks that ExecStart's binary exists, so the unit is verified with the
// path pointed at a stand-in executable; everything else is verified as is.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze := needTool(t, "systemd-analyze")
	dir := t.TempDir()
	stub := filepath.Join(dir, "mcpwatch")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(readFile(t, unitFile)), "/usr/local/bin/mcpwatch", stub)
	path := filepath.Join(dir, "mcpwatch.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	// Socket activation: the socket unit, and the service with its drop-in.
	socket := filepath.Join(dir, "mcpwatch.socket")
	if err := os.WriteFile(socket, readFile(t, "systemd/mcpwatch.socket"), 0o644); err != nil {
		t.Fatal(err)
	}
	dropIn := filepath.Join(dir, "mcpwatch.service.d", "socket.conf")
	if err := os.MkdirAll(filepath.Dir(dropIn), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := strings.ReplaceAll(string(readFile(t, "systemd/mcpwatch-socket.conf")), "/usr/local/bin/mcpwatch", stub)
	if !strings.Contains(conf, "--web.systemd-socket") {
		t.Errorf("the drop-in does not serve on the passed socket")
	}
	if err := os.WriteFile(dropIn, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(analyze, "verify", socket, path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify with socket activation: %v\n%s", err, out)
	}
}

// TestSystemdExampleConfigLoads loads the example mcpwatch.yml with the
// config package, so a change of the config schema breaks this test, not a
// user's first start.
func TestSystemdExampleConfigLoads(t *testing.T) {
	cfg, err := config.Load("systemd/mcpwatch.yml")
	if err != nil {
		t.Fatalf("systemd/mcpwatch.yml: %v", err)
	}
	if len(cfg.Servers) != 2 || cfg.Lock != "/etc/mcpwatch/mcp-tools.lock.json" {
		t.Errorf("loaded %d servers, lock %q; want 2 and /etc/mcpwatch/mcp-tools.lock.json", len(cfg.Servers), cfg.Lock)
	}
}
