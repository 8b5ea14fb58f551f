package doctor

import "testing"

// A finding names the repository's paths from its top, and leaves alone a
// path that only starts with the repository's name.
func TestRelText(t *testing.T) {
	t.Parallel()
	d := &doctor{opts: Options{Dir: "/w/repo"}}
	for in, want := range map[string]string{
		"lock file /w/repo/mcp-tools.lock.json:1:12: not valid JSON": "lock file mcp-tools.lock.json:1:12: not valid JSON",
		"no .mcp.json in /w/repo: pass -c":                           "no .mcp.json in .: pass -c",
		"ends in /w/repo":                                            "ends in .",
		"a backup in /w/repo.bak/x and /w/repo2/y, beside /w/repo/z": "a backup in /w/repo.bak/x and /w/repo2/y, beside z",
		"nothing of it": "nothing of it",
	} {
		if got := d.relText(in); got != want {
			t.Errorf("relText(%q) = %q, want %q", in, got, want)
		}
	}
}
