package probetest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestStdioLegacyInitializeNegotiatesVersion(t *testing.T) {
	tests := []struct {
		era             probetest.Era
		requested, want string
	}{
		{probetest.EraLegacy, "2025-06-18", "2025-06-18"},
		{probetest.EraLegacy, "2024-11-05", "2024-11-05"},
		{probetest.EraLegacy, "2026-07-28", "2025-11-25"},
		{"", "1999-01-01", "2025-11-25"},
		{probetest.EraDual, "2025-03-26", "2025-03-26"},
	}
	for _, tt := range tests {
		t.Run(string(tt.era)+"/"+tt.requested, func(t *testing.T) {
			c := startStdio(t, probetest.Config{Era: tt.era, ServerName: "reports"}, nil)
			init := c.initialize(tt.requested)
			var version string
			init.field(t, "protocolVersion", &version)
			var info struct{ Name string }
			init.field(t, "serverInfo", &info)
			if version != tt.want || info.Name != "reports" {
				t.Errorf("initialize answered version %q, server %q; want %q, %q", version, info.Name, tt.want, "reports")
			}
			if got := c.call("tools/list", nil).list(t); !slices.Equal(got.names(), reportTools) || got.ResultType != "" {
				t.Errorf("tools/list = %v (resultType %q), want %v without resultType", got.names(), got.ResultType, reportTools)
			}
			c.stdin.Close()
			if code := c.wait(); code != 0 {
				t.Errorf("exit code %d after stdin closed, want 0", code)
			}
			for _, logged := range []string{"probetest: recv initialize", "probetest: recv notifications/initialized", "probetest: recv tools/list"} {
				if !strings.Contains(c.stderr.String(), logged) {
					t.Errorf("stderr lacks %q:\n%s", logged, c.stderr)
				}
			}
		})
	}
}

func TestStdioLegacyAnswersUnknownMethodsWithMethodNotFound(t *testing.T) {
	c := startStdio(t, probetest.Config{Era: probetest.EraLegacy}, nil)
	if got := c.call("server/discover", modernParams("2026-07-28", nil)); got.errorCode() != -32601 {
		t.Errorf("server/discover before initialize: %+v, want error -32601", got)
	}
	c.initialize("2025-11-25")
	if got := c.call("resources/list", nil); got.errorCode() != -32601 {
		t.Errorf("resources/list: %+v, want error -32601", got)
	}
	if got := c.call("ping", nil); got.Error != nil || string(got.Result) != "{}" {
		t.Errorf("ping: %+v, want {}", got)
	}
}

func TestStdioModernEra(t *testing.T) {
	for _, era := range []probetest.Era{probetest.EraModern, probetest.EraDual} {
		t.Run(string(era), func(t *testing.T) {
			c := startStdio(t, probetest.Config{Era: era}, nil)
			wantVersions := []string{"2026-07-28"}
			if era == probetest.EraDual {
				wantVersions = append(wantVersions, probetest.LegacyVersions()...)
			}

			discover := c.call("server/discover", modernParams("2026-07-28", nil))
			var versions []string
			discover.field(t, "supportedVersions", &versions)
			var resultType, cacheScope string
			discover.field(t, "resultType", &resultType)
			discover.field(t, "cacheScope", &cacheScope)
			var meta map[string]struct{ Name string }
			discover.field(t, "_meta", &meta)
			if !slices.Equal(versions, wantVersions) || resultType != "complete" || cacheScope != "public" ||
				meta["io.modelcontextprotocol/serverInfo"].Name != "probetest" {
				t.Errorf("server/discover = %s", discover.Result)
			}

			list := c.call("tools/list", modernParams("2026-07-28", nil)).list(t)
			if !slices.Equal(list.names(), reportTools) || list.ResultType != "complete" || list.TTLMs == nil || *list.TTLMs <= 0 || list.CacheScope != "public" {
				t.Errorf("tools/list = %+v, want the report tools with resultType, ttlMs, cacheScope", list)
			}

			call := c.call("tools/call", modernParams("2026-07-28", map[string]any{
				"name": "fetch_daily_report", "arguments": map[string]any{"date": "2026-08-01"}}))
			var content []struct{ Text string }
			call.field(t, "content", &content)
			if len(content) != 1 || !strings.Contains(content[0].Text, "2026-08-01") {
				t.Errorf("tools/call = %s", call.Result)
			}

			// Without _meta a dual server answers in the legacy era.
			if got := c.call("tools/list", nil); era == probetest.EraModern && got.errorCode() != -32602 {
				t.Errorf("tools/list without _meta: %+v, want -32602", got)
			}
			bad := c.call("tools/list", modernParams("1900-01-01", nil))
			var data struct {
				Supported []string
				Requested string
			}
			if bad.errorCode() != -32022 || json.Unmarshal(bad.Error.Data, &data) != nil ||
				!slices.Equal(data.Supported, wantVersions) || data.Requested != "1900-01-01" {
				t.Errorf("tools/list at 1900-01-01: %+v, want -32022 with data.supported", bad)
			}
			if got := c.call("resources/list", modernParams("2026-07-28", nil)); got.errorCode() != -32601 {
				t.Errorf("unknown method: %+v, want -32601", got)
			}
		})
	}
}

func TestStdioModernOnlyRejectsInitialize(t *testing.T) {
	c := startStdio(t, probetest.Config{Era: probetest.EraModern}, nil)
	got := c.call("initialize", initializeParams("2025-11-25"))
	var data struct{ Supported []string }
	if got.Error == nil || json.Unmarshal(got.Error.Data, &data) != nil || !slices.Equal(data.Supported, []string{"2026-07-28"}) {
		t.Errorf("initialize on a modern-only server: %+v, want an error naming the supported versions", got)
	}
}

func TestStdioToolSetsDependOnCredentials(t *testing.T) {
	tests := []struct {
		name string
		cfg  probetest.Config
		env  map[string]string
		want []string
	}{
		{"healthy", probetest.Config{}, nil, reportTools},
		{"gated with token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, map[string]string{"REPORT_API_TOKEN": "s3cret"}, reportTools},
		{"gated without token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, nil, nil},
		{"gated with wrong token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, map[string]string{"REPORT_API_TOKEN": "nope"}, nil},
		{"gated any token", probetest.Config{Behavior: probetest.TokenGated}, map[string]string{"REPORT_API_TOKEN": "x"}, reportTools},
		{"gated other variable", probetest.Config{Behavior: probetest.TokenGated, TokenEnv: "OTHER"}, map[string]string{"OTHER": "x"}, reportTools},
		{"scoped read", probetest.Config{Behavior: probetest.Scoped}, map[string]string{"REPORT_SCOPE": "read"}, []string{"list_report_dates"}},
		{"scoped full", probetest.Config{Behavior: probetest.Scoped}, nil, reportTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startStdio(t, tt.cfg, tt.env)
			c.initialize("2025-11-25")
			if got := c.call("tools/list", nil).list(t).names(); !slices.Equal(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStdioManyToolsPaginates(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.ManyTools, Era: probetest.EraDual}, nil)
	seen := map[string]bool{}
	pages := 0
	params := modernParams("2026-07-28", nil)
	for {
		page := c.call("tools/list", params).list(t)
		pages++
		if len(page.Tools) != probetest.ManyToolsPageSize {
			t.Fatalf("page %d has %d tools, want %d", pages, len(page.Tools), probetest.ManyToolsPageSize)
		}
		for _, name := range page.names() {
			seen[name] = true
		}
		if page.NextCursor == nil {
			break
		}
		if pages > probetest.ManyToolsCount {
			t.Fatal("pagination does not end")
		}
		params = modernParams("2026-07-28", map[string]any{"cursor": *page.NextCursor})
	}
	if pages != 10 || len(seen) != probetest.ManyToolsCount {
		t.Errorf("%d pages, %d distinct tools; want 10 and %d", pages, len(seen), probetest.ManyToolsCount)
	}
	if got := c.call("tools/list", modernParams("2026-07-28", map[string]any{"cursor": "bogus"})); got.errorCode() != -32602 {
		t.Errorf("bogus cursor: %+v, want -32602", got)
	}
}

func TestStdioStuckCursorNeverAdvances(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.StuckCursor}, nil)
	c.initialize("2025-11-25")
	first := c.call("tools/list", nil).list(t)
	second := c.call("tools/list", map[string]any{"cursor": *first.NextCursor}).list(t)
	if first.NextCursor == nil || second.NextCursor == nil || *second.NextCursor != *first.NextCursor {
		t.Errorf("cursors %v then %v, want the same one twice", first.NextCursor, second.NextCursor)
	}
}

func TestStdioStallToolsListAnswersEverythingElse(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.StallToolsList}, nil)
	c.initialize("2025-11-25")
	c.send("tools/list", nil)
	pingID := c.send("ping", nil)
	// The ping was sent after tools/list; its answer coming first (and
	// alone) shows tools/list is held, not slow.
	if got := c.recv(); string(got.ID) != strconv.Itoa(pingID) {
		t.Errorf("first answer after tools/list and ping: %+v, want the ping's", got)
	}
}

func TestStdioWrongID(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.WrongID}, nil)
	c.initialize("2025-11-25")
	id := c.send("tools/list", nil)
	if got := c.recv(); string(got.ID) == strconv.Itoa(id) || got.Result == nil {
		t.Errorf("tools/list answered with id %s, want a result with another id", got.ID)
	}
}

func TestStdioBannerComesFirst(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.Banner}, nil)
	banner := c.nextLine()
	if json.Valid(banner.head) {
		t.Errorf("first line %q is JSON, want a banner", banner.head)
	}
	if init := c.initialize("2025-11-25"); init.Error != nil {
		t.Errorf("initialize after the banner: %+v", init)
	}
}

func TestStdioHugeLine(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.HugeLine}, nil)
	id := c.send("initialize", initializeParams("2025-11-25"))
	huge := c.nextLine()
	wantHead := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"padding":"xxx`, id)
	if huge.size < probetest.HugeLineBytes || !strings.HasPrefix(string(huge.head), wantHead) {
		t.Errorf("first answer: %d bytes starting %.60q; want at least %d starting %q", huge.size, huge.head, probetest.HugeLineBytes, wantHead)
	}
	if got := c.call("ping", nil); got.Error != nil {
		t.Errorf("the request after the huge line: %+v, want an answer", got)
	}
}

func TestStdioExitAtOnce(t *testing.T) {
	c := startStdio(t, probetest.Config{Behavior: probetest.ExitAtOnce}, nil)
	if code := c.wait(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got := c.stderr.String(); got != "fatal: REPORT_API_TOKEN is not set\n" {
		t.Errorf("stderr = %q", got)
	}
	if _, ok := <-c.lines; ok {
		t.Error("stdout is not empty")
	}
}

func TestStdioRefusesHTTPOnlyBehaviors(t *testing.T) {
	for _, b := range []probetest.Behavior{probetest.Unauthorized401, probetest.InsufficientScope403, probetest.ServerError500} {
		t.Run(string(b), func(t *testing.T) {
			c := startStdio(t, probetest.Config{Behavior: b}, nil)
			if code := c.wait(); code != 2 || !strings.Contains(c.stderr.String(), "HTTP only") {
				t.Errorf("exit code %d, stderr %q; want 2 and a message that names HTTP", code, c.stderr)
			}
		})
	}
}

func TestStdioPingFirst(t *testing.T) {
	tests := []struct {
		name     string
		answer   map[string]any
		wantCode int
	}{
		{"answered", map[string]any{"result": map[string]any{}}, 0},
		{"refused", map[string]any{"error": map[string]any{"code": -32601, "message": "no"}}, -32603},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startStdio(t, probetest.Config{Behavior: probetest.PingFirst}, nil)
			c.initialize("2025-11-25")
			listID := c.send("tools/list", nil)
			ping := c.recv()
			if ping.Method != "ping" || len(ping.ID) == 0 {
				t.Fatalf("first message after tools/list: %+v, want a ping request", ping)
			}
			answer := map[string]any{"jsonrpc": "2.0", "id": ping.ID}
			for k, v := range tt.answer {
				answer[k] = v
			}
			c.write(answer)
			got := c.recv()
			if string(got.ID) != strconv.Itoa(listID) || got.errorCode() != tt.wantCode {
				t.Errorf("tools/list answer: %+v, want id %d and error code %d", got, listID, tt.wantCode)
			}
		})
	}
}

func TestStdioListChanged(t *testing.T) {
	t.Run("legacy: after initialized", func(t *testing.T) {
		c := startStdio(t, probetest.Config{Behavior: probetest.ListChanged}, nil)
		c.initialize("2025-11-25")
		if got := c.recv(); got.Method != "notifications/tools/list_changed" {
			t.Errorf("after initialized: %+v, want the list_changed notification", got)
		}
		if got := c.call("tools/list", nil).list(t); len(got.Tools) != 2 {
			t.Errorf("tools/list: %v", got.names())
		}
	})
	t.Run("modern: before the tools/list reply", func(t *testing.T) {
		c := startStdio(t, probetest.Config{Behavior: probetest.ListChanged, Era: probetest.EraModern}, nil)
		id := c.send("tools/list", modernParams("2026-07-28", nil))
		if got := c.recv(); got.Method != "notifications/tools/list_changed" {
			t.Errorf("first message: %+v, want the list_changed notification", got)
		}
		if got := c.recv(); string(got.ID) != strconv.Itoa(id) {
			t.Errorf("second message: %+v, want the tools/list reply", got)
		}
	})
}

func TestStdioSlowBodyDrips(t *testing.T) {
	// Raw bytes, not lines: the whole line would take half a minute.
	cmd := serverCommand(probetest.Config{Behavior: probetest.SlowBody}, nil)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte, 1)
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-read
		_ = cmd.Wait()
	})

	start := time.Now()
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 3)
		n, _ := io.ReadFull(stdout, buf)
		read <- buf[:n]
		_, _ = io.Copy(io.Discard, stdout)
		close(read)
	}()
	select {
	case got := <-read:
		elapsed := time.Since(start)
		if string(got) != `{"j` {
			t.Fatalf("first bytes %q", got)
		}
		// Timers never fire early, so this lower bound cannot flake.
		if min := 3 * probetest.DripIntervalMS * time.Millisecond; elapsed < min {
			t.Errorf("3 bytes took %v, want at least %v", elapsed, min)
		}
	case <-time.After(waitLimit):
		t.Fatal("no byte")
	}
}

func TestStdioUnresponsiveLeavesAGrandchildThatIgnoresSIGTERM(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	c := startStdio(t, probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile}, nil)
	grandchild := waitForPID(t, pidFile)
	// Both ignore SIGTERM before the pid file exists (the kernel then drops
	// the signal: there is no handler to wait for), which /proc tells
	// without waiting.
	for _, pid := range []int{c.cmd.Process.Pid, grandchild} {
		if !ignoresSIGTERM(t, pid) {
			t.Fatalf("process %d does not ignore SIGTERM", pid)
		}
	}
	c.send("initialize", initializeParams("2025-11-25"))
	c.stdin.Close()
	if err := syscall.Kill(c.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(grandchild, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// That it ignores stdin's end and the request can only be watched for
	// a while: a correct server never fails this, a broken one is caught
	// unless the machine is too busy to run it for half a second.
	select {
	case <-c.exited:
		t.Fatalf("the server exited after SIGTERM and stdin close (stderr: %s)", c.stderr)
	case l := <-c.lines:
		t.Fatalf("the server answered: %q", l.head)
	case <-time.After(500 * time.Millisecond):
	}
	if !alive(grandchild) {
		t.Fatal("the grandchild died of SIGTERM")
	}

	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.wait()
	deadline := time.Now().Add(waitLimit)
	for alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after the group was killed", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitForPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file %s after %v", path, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ignoresSIGTERM reads the process's ignored-signal mask from /proc.
func ignoresSIGTERM(t *testing.T, pid int) bool {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if hex, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status: %q", pid, line)
			}
			return mask&(1<<(syscall.SIGTERM-1)) != 0
		}
	}
	t.Fatalf("/proc/%d/status has no SigIgn line", pid)
	return false
}

// alive reports whether a process exists and is not a zombie (a container's
// pid 1 may never reap the grandchild).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
