package memlimit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
)

// fakeRoot lays out /proc/self/cgroup and the cgroup files under a
// temporary root.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestChoose(t *testing.T) {
	v2 := map[string]string{
		"proc/self/cgroup": "0::/system.slice/mcpwatch.service\n",
		"sys/fs/cgroup/system.slice/mcpwatch.service/memory.max": "524288000\n",
		"sys/fs/cgroup/system.slice/memory.max":                  "max\n",
	}
	v2Parent := map[string]string{ // the pod's limit, on a parent
		"proc/self/cgroup":                          "0::/kubepods/pod1/c1\n",
		"sys/fs/cgroup/kubepods/pod1/c1/memory.max": "max\n",
		"sys/fs/cgroup/kubepods/pod1/memory.max":    "1073741824\n",
	}
	v1 := map[string]string{
		"proc/self/cgroup": "5:devices:/\n4:memory:/docker/abc\n0::/\n",
		"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "268435456\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n",
	}
	v1None := map[string]string{
		"proc/self/cgroup": "4:memory:/process_api/x\n0::/\n",
		"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
	}
	for _, tc := range []struct {
		name       string
		flag, env  string
		files      map[string]string
		want       int64
		wantSource string
	}{
		{"cgroup v2", Auto, "", v2, 471859200, "/sys/fs/cgroup/system.slice/mcpwatch.service/memory.max"},
		{"cgroup v2, a parent's limit", Auto, "", v2Parent, 966367641, "/sys/fs/cgroup/kubepods/pod1/memory.max"},
		{"cgroup v1", Auto, "", v1, 241591910, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"cgroup v1 without a limit", Auto, "", v1None, 0, "none"},
		{"no /proc", Auto, "", nil, 0, "none"},
		{"GOMEMLIMIT stands", Auto, "300MiB", v2, 300 << 20, "GOMEMLIMIT"},
		{"the flag wins", "400MiB", "300MiB", v2, 400 << 20, "--memory.limit"},
		{"off", Off, "", v2, 0, "--memory.limit=off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Choose(tc.flag, tc.env, fakeRoot(t, tc.files), bytesize.Parse)
			if err != nil || got.Bytes != tc.want || got.Source != tc.wantSource {
				t.Errorf("Choose = %+v, %v; want %d from %s", got, err, tc.want, tc.wantSource)
			}
		})
	}
	if _, err := Choose("400 parsecs", "", t.TempDir(), bytesize.Parse); err == nil {
		t.Error("--memory.limit 400 parsecs accepted")
	}
}
