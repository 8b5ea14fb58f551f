package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// serve's settings are layered: a flag's default, its variable, the
// command line, each over the one before; every flag has a variable.
func TestServeSettingsLayers(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string, args ...string) (serveFlags, func(string) bool, error) {
		var f serveFlags
		fs := newServeFlagSet(&f)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		given, err := layer(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &f)
		return f, given, err
	}

	f, given, err := parse(map[string]string{
		"MCPWATCH_REPLICA":            "from-env",
		"MCPWATCH_SHARD_TOTAL":        "4",
		"MCPWATCH_WEB_LISTEN_ADDRESS": "127.0.0.1:1,[::1]:2",
		"MCPWATCH_WEB_ENABLE_PPROF":   "true",
		"MCPWATCH_PROBE_HISTORY":      "7",
		"MCPWATCH_LOG_FORMAT":         "",   // empty: as if unset
		"OTHER_REPLICA":               "no", // not ours
	}, "--replica", "from-flag", "--log.level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	if f.Replica != "from-flag" || f.ShardTotal != 4 || !f.EnablePprof || f.History != 7 || f.LogLevel != "debug" || f.LogFormat != "logfmt" ||
		!slices.Equal(f.Listen, []string{"127.0.0.1:1", "[::1]:2"}) || f.ShardIndex != 0 {
		t.Errorf("settings %+v", f)
	}
	for name, want := range map[string]bool{"replica": true, "shard.total": true, "log.level": true, "shard.index": false, "log.format": false} {
		if given(name) != want {
			t.Errorf("given(%s) = %t, want %t", name, !want, want)
		}
	}

	for env, want := range map[string]string{
		"MCPWATCH_SHARD_TOTAL":      `$MCPWATCH_SHARD_TOTAL="three" is not a valid --shard.total: want an integer`,
		"MCPWATCH_WEB_ENABLE_PPROF": `$MCPWATCH_WEB_ENABLE_PPROF="three" is not a valid --web.enable-pprof: want true or false`,
	} {
		if _, _, err := parse(map[string]string{env: "three"}); err == nil || err.Error() != want {
			t.Errorf("%s=three: %v, want %s", env, err, want)
		}
	}
}

// Every flag's help names its variable.
func TestServeHelpNamesTheVariables(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runCLI(t, nil, "serve", "--help")
	for _, want := range []string{"[$MCPWATCH_WEB_LISTEN_ADDRESS]", "[$MCPWATCH_SHARD_FROM_POD_NAME]", "[$MCPWATCH_CONFIG_FILE]", "MCPWATCH_SHARD_INDEX"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
}

// A variable gives a setting the daemon really uses; a flag given too wins.
func TestServeTakesItsSettingsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcpwatch.yml")
	writeTestFile(t, file, "servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n")
	_, logs := serveLogged(t, map[string]string{"MCPWATCH_CONFIG_FILE": file, "MCPWATCH_REPLICA": "mcpwatch-1", "MCPWATCH_SHARD_TOTAL": "2"},
		"--shard.from-pod-name", "mcpwatch-0")
	var m map[string]any
	waitUntil(t, "the watching log line", func() bool { // logged just after the serving line
		m, _ = logs.find("watching")
		return m != nil
	})
	if m["config"] != file || m["replica"] != "mcpwatch-1" || m["shard"] != "0 of 2" {
		t.Errorf("watching %v, %v as %v, want %s as mcpwatch-1, shard 0 of 2", m["config"], m["shard"], m["replica"], file)
	}
}
