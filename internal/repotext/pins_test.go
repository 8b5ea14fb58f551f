package repotext

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository, from this directory.
const repoRoot = "../.."

// releasedSection is a released version's heading in CHANGELOG.md:
// "## [0.2.0] - 2026-12-02". The first one is the newest.
var releasedSection = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$`)

// pin is every way the repository's text names a release of mcpwatch for a
// reader to run: Go's install of the command, the image's tag, a kustomize
// remote base and the manifests' image tag, and a link into a release's
// files (the alerts' runbook links, which the mixin points at a tag), and
// the release the Helm chart runs (its appVersion).
var pin = regexp.MustCompile(`mcpwatch/cmd/mcpwatch@v(\d+\.\d+\.\d+)|ghcr\.io/mcpwatch/mcpwatch:v(\d+\.\d+\.\d+)|deploy/kubernetes\?ref=v(\d+\.\d+\.\d+)|newTag: v(\d+\.\d+\.\d+)|mcpwatch/mcpwatch/blob/v(\d+\.\d+\.\d+)/|appVersion: "v(\d+\.\d+\.\d+)"`)

// newestRelease returns the version of CHANGELOG.md's newest released
// section.
func newestRelease(t *testing.T, changelog string) string {
	t.Helper()
	m := releasedSection.FindStringSubmatch(changelog)
	if m == nil {
		t.Fatal("CHANGELOG.md has no released section (## [X.Y.Z] - YYYY-MM-DD)")
	}
	return m[1]
}

// pins returns each pin of text as "file:line: vX.Y.Z".
func pins(name, text string) (found []string, versions []string) {
	for i, line := range strings.Split(text, "\n") {
		for _, m := range pin.FindAllStringSubmatch(line, -1) {
			v := strings.Join(m[1:], "")
			found = append(found, name+":"+strconv.Itoa(i+1)+": v"+v)
			versions = append(versions, v)
		}
	}
	return found, versions
}

// TestPinsAreTheNewestRelease: every command, workflow and manifest that
// tells a reader which release of mcpwatch to run names the newest released
// section of CHANGELOG.md, so that the docs never describe what no release
// has (a README whose `mcpwatch init` the pinned release lacks). Cutting a
// release without moving a pin fails here. Go sources and tests are left
// out: they hold versions as test inputs, not as advice.
func TestPinsAreTheNewestRelease(t *testing.T) {
	changelog, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	newest := newestRelease(t, string(changelog))
	if !strings.Contains(string(changelog), "["+newest+"]: https://github.com/mcpwatch/mcpwatch/") {
		t.Errorf("CHANGELOG.md has no link for [%s] at its end", newest)
	}
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the test reads the files git tracks)", err)
	}
	perFile := map[string]int{}
	for _, name := range strings.Split(string(out), "\x00") {
		switch {
		case name == "", name == "CHANGELOG.md", strings.HasSuffix(name, ".go"),
			strings.HasPrefix(name, "testdata/"), strings.Contains(name, "/testdata/"):
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			continue // removed in the work tree
		}
		found, versions := pins(name, string(data))
		for i, v := range versions {
			perFile[name]++
			if v != newest {
				t.Errorf("%s; the newest release in CHANGELOG.md is v%s: move the pin (docs/releasing.md, Making a release)", found[i], newest)
			}
		}
	}
	// The places a reader copies from must pin a release at all: a pin
	// removed (or reworded past the pattern) would pass the loop above.
	for _, name := range []string{"README.md", "docs/deployment.md", "docs/releasing.md",
		"examples/github-actions/mcp-preflight.yml", "deploy/kubernetes/kustomization.yaml",
		"deploy/kubernetes/ha-pair/kustomization.yaml", "deploy/kubernetes/sharded/kustomization.yaml",
		"examples/kubernetes/kustomization.yaml", "mixin/config.libsonnet", "deploy/helm/mcpwatch/Chart.yaml"} {
		if perFile[name] == 0 {
			t.Errorf("%s pins no release of mcpwatch (go install ...@vX.Y.Z, the image's tag, newTag: or ?ref=)", name)
		}
	}
}

// The pattern and the section finder on text written to fail: an older pin
// is found with its line, and the first released section is the newest.
func TestPinsFindALaggingPin(t *testing.T) {
	newest := newestRelease(t, "## [Unreleased]\n\n## [0.3.0] - 2027-01-02\n\n## [0.2.0] - 2026-12-02\n")
	if newest != "0.3.0" {
		t.Fatalf("newest release %q, want 0.3.0", newest)
	}
	found, versions := pins("x.md", "a\ngo install github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.2.0\n    newTag: v0.3.0\nimage ghcr.io/mcpwatch/mcpwatch:v0.1.0 and ?ref: github.com/mcpwatch/mcpwatch//deploy/kubernetes?ref=v0.2.1\n")
	want := []string{"x.md:2: v0.2.0", "x.md:3: v0.3.0", "x.md:4: v0.1.0", "x.md:4: v0.2.1"}
	if strings.Join(found, "|") != strings.Join(want, "|") || len(versions) != 4 {
		t.Errorf("pins found %v, want %v", found, want)
	}
}
