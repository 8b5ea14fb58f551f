package releasecheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the release check reads,
// decoded strictly: a misspelt key (runs_on, timeout_minutes) fails.
type workflow struct {
	Name        string            `yaml:"name"`
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		RunsOn         string            `yaml:"runs-on"`
		TimeoutMinutes int               `yaml:"timeout-minutes"`
		Permissions    map[string]string `yaml:"permissions"`
		Env            map[string]string `yaml:"env"`
		Steps          []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// pinnedAction is an action pinned by commit, its version in a comment:
// `uses: owner/repo@<40 hex> # vX.Y.Z`. A tag, even a version's, can be
// moved by whoever owns the action; a commit cannot.
var pinnedAction = regexp.MustCompile(`(?m)^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+){1,2})\s*$`)

// goreleaserVersion is the GoReleaser this module checks the configuration
// against (go.mod), which the release must run.
func goreleaserVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*(?:require )?github\.com/goreleaser/goreleaser/v2 (v\S+)$`).FindStringSubmatch(readLocal(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod does not require github.com/goreleaser/goreleaser/v2")
	}
	return m[1]
}

func readLocal(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The release workflow, read as GitHub would: it runs on a version tag,
// with the least permissions that let it publish, every action pinned by
// commit, the GoReleaser this module checks against, the notes from
// CHANGELOG.md, syft and cosign installed for the SBOMs and signatures,
// both architectures, the provenance of the archives and the images, and
// the chart.
func TestReleaseWorkflow(t *testing.T) {
	text := read(t, ".github/workflows/release.yml")
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var w workflow
	if err := dec.Decode(&w); err != nil {
		t.Fatalf(".github/workflows/release.yml: %v", err)
	}
	var on struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	}
	if err := w.On.Decode(&on); err != nil || !slices.Equal(on.Push.Tags, []string{"v*.*.*"}) || len(w.On.Content) != 2 {
		t.Errorf("on: want push of tags v*.*.* alone (%v)", err)
	}
	if len(w.Permissions) != 1 || w.Permissions["contents"] != "read" {
		t.Errorf("workflow permissions %v: want contents: read, the job asking for more", w.Permissions)
	}
	if w.Concurrency.CancelInProgress {
		t.Error("a release cancelled half-way leaves half a release")
	}
	job, ok := w.Jobs["release"]
	if !ok || len(w.Jobs) != 1 {
		t.Fatalf("want one job, release: %v", w.Jobs)
	}
	for k, v := range map[string]string{"contents": "write", "packages": "write", "id-token": "write", "attestations": "write"} {
		if job.Permissions[k] != v {
			t.Errorf("permission %s: %q, want %q", k, job.Permissions[k], v)
		}
	}
	if len(job.Permissions) != 4 || job.TimeoutMinutes <= 0 || job.TimeoutMinutes > 120 {
		t.Errorf("permissions %v, timeout %d", job.Permissions, job.TimeoutMinutes)
	}
	if job.Env["GORELEASER_VERSION"] != goreleaserVersion(t) {
		t.Errorf("the release runs GoReleaser %s; the configuration is checked against %s", job.Env["GORELEASER_VERSION"], goreleaserVersion(t))
	}

	// Every uses: pinned by commit.
	pinned := map[string]string{}
	for _, m := range pinnedAction.FindAllStringSubmatch(text, -1) {
		pinned[m[1]] = m[3]
	}
	uses := map[string]bool{}
	var runs strings.Builder
	for _, s := range job.Steps {
		if s.Uses != "" {
			action, _, _ := strings.Cut(s.Uses, "@")
			uses[action] = true
			if _, ok := pinned[action]; !ok {
				t.Errorf("uses: %s is not pinned by commit with its version beside it (owner/repo@<sha> # vX.Y.Z)", s.Uses)
			}
		}
		runs.WriteString(s.Run + "\n")
		for _, v := range s.With {
			runs.WriteString(v + "\n")
		}
	}
	for _, want := range []string{"actions/checkout", "actions/setup-go", "sigstore/cosign-installer", "anchore/sbom-action/download-syft",
		"docker/setup-qemu-action", "docker/setup-buildx-action", "docker/login-action", "goreleaser/goreleaser-action",
		"actions/attest-build-provenance", "azure/setup-helm"} {
		if !uses[want] {
			t.Errorf("the release does not use %s", want)
		}
	}
	all := runs.String()
	for _, want := range []string{
		"scripts/release-notes.sh", "release --clean --release-notes ${{ runner.temp }}/notes.md",
		"subject-checksums: dist/checksums.txt", "dist/checksums.txt",
		"helm lint --strict deploy/helm/mcpwatch", "helm package deploy/helm/mcpwatch --version \"$VERSION\" --app-version \"v$VERSION\"",
		"helm push", "cosign sign --yes",
		"cd internal/tools/releasecheck && go test",
	} {
		if !strings.Contains(all+text, want) {
			t.Errorf("the release does not run %q", want)
		}
	}
	provenance := 0
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") {
			provenance++
			if s.With["subject-checksums"] == "" && (s.With["subject-digest"] == "" || s.With["push-to-registry"] != "true") {
				t.Errorf("a provenance step attests neither the checksums' files nor a pushed image: %v", s.With)
			}
		}
	}
	if provenance != 3 {
		t.Errorf("%d provenance steps, want 3: the archives, the image, the stdio image", provenance)
	}
	if strings.Contains(text, "secrets.") && regexp.MustCompile(`run: [^\n]*\$\{\{ secrets\.`).MatchString(text) {
		t.Error("a run: line expands a secret inline; pass it through env:")
	}
}

// The pin pattern takes a commit with its version, and refuses a tag or a
// short commit: the test above would otherwise pass anything.
func TestPinnedActionPattern(t *testing.T) {
	for line, want := range map[string]bool{
		"      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2": true,
		"      - uses: actions/checkout@v4":                                                false,
		"      - uses: actions/checkout@11bd719 # v4.2.2":                                  false,
		"      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683":          false,
	} {
		if got := pinnedAction.MatchString(line); got != want {
			t.Errorf("%q: pinned %v, want %v", line, got, want)
		}
	}
}

// scripts/release-notes.sh prints a released version's section of
// CHANGELOG.md, and fails on a version it lacks.
func TestReleaseNotes(t *testing.T) {
	script := filepath.Join(root, "scripts/release-notes.sh")
	out, err := exec.Command(script, "v0.2.0").Output()
	if err != nil {
		t.Fatalf("release-notes.sh v0.2.0: %v", err)
	}
	changelog := read(t, "CHANGELOG.md")
	_, section, _ := strings.Cut(changelog, "\n## [0.2.0]")
	_, section, _ = strings.Cut(section, "\n")
	section, _, _ = strings.Cut(section, "\n## [")
	if want := strings.TrimSpace(section); strings.TrimSpace(string(out)) != want || len(want) < 100 {
		t.Errorf("release-notes.sh v0.2.0 printed %d bytes, the section holds %d", len(out), len(want))
	}
	if bytes.Contains(out, []byte("## [")) {
		t.Error("the notes hold a heading of another version")
	}
	cmd := exec.Command(script, "9.9.9")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "no section '## [9.9.9]'") {
		t.Errorf("release-notes.sh 9.9.9: %v, %s", err, stderr.String())
	}
}
