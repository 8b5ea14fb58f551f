package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The install paths the docs give (go install, the container image, the
// GitHub Actions example) are checked here against what they install: the
// module path, the Go version, and flags the commands accept.

// goMod returns the module path and the major.minor Go version of go.mod.
func goMod(t *testing.T) (module, goVersion string) {
	t.Helper()
	data := readFile(t, "../../go.mod")
	m := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(data)
	v := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(data)
	if m == nil || v == nil {
		t.Fatalf("go.mod has no module or go line:\n%s", data)
	}
	return string(m[1]), string(v[1])
}

// workflow is the part of a GitHub Actions workflow read here; decoding it
// with known fields only catches a misspelt key.
type workflow struct {
	Name        string            `yaml:"name"`
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn         string `yaml:"runs-on"`
		TimeoutMinutes int    `yaml:"timeout-minutes"`
		Steps          []workflowStep
	} `yaml:"jobs"`
}

type workflowStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// checkCommand parses an 'mcpwatch check ...' line with check's own flags.
func checkCommand(t *testing.T, where, line string) {
	t.Helper()
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "mcpwatch" || args[1] != "check" {
		t.Fatalf("%s: %q is not an mcpwatch check command", where, line)
	}
	var f checkFlags
	fs := newCheckFlagSet(&f)
	if err := fs.Parse(args[2:]); err != nil {
		t.Fatalf("%s: %q: %v", where, line, err)
	}
	if err := f.preflightFlags.check(fs); err != nil {
		t.Errorf("%s: %q: %v", where, line, err)
	}
	if err := f.out.check(); err != nil {
		t.Errorf("%s: %q: %v", where, line, err)
	}
}

func TestGitHubActionsExample(t *testing.T) {
	module, goVersion := goMod(t)
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, "../../examples/github-actions/mcp-preflight.yml")))
	dec.KnownFields(true)
	var w workflow
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("examples/github-actions/mcp-preflight.yml: %v", err)
	}
	if w.On.Kind != yaml.MappingNode || len(w.Jobs) != 1 {
		t.Fatalf("want triggers and one job: %+v", w)
	}
	for name, job := range w.Jobs {
		if job.RunsOn == "" || job.TimeoutMinutes <= 0 {
			t.Errorf("job %s: runs-on %q, timeout-minutes %d", name, job.RunsOn, job.TimeoutMinutes)
		}
		var downloaded, installed, checked bool
		fallback := "steps.download.outputs.installed != 'true'"
		for i, s := range job.Steps {
			switch {
			case s.Uses != "":
				if !regexp.MustCompile(`^[\w.-]+/[\w.-]+@v\d+$`).MatchString(s.Uses) {
					t.Errorf("step %d uses %q: want an action pinned to a major version", i, s.Uses)
				}
				if strings.HasPrefix(s.Uses, "actions/setup-go@") && (s.With["go-version"] != goVersion || s.If != fallback) {
					t.Errorf("setup-go installs Go %v (go.mod wants %s), if %q (want it only for the fallback, %q)", s.With["go-version"], goVersion, s.If, fallback)
				}
			case s.ID == "download":
				if v := s.Env["MCPWATCH_VERSION"]; installed || v == "" {
					t.Errorf("the download step comes after go install, or names no version (%q)", v)
				}
				runDownloadStep(t, s.Run, s.Env["MCPWATCH_VERSION"])
				downloaded = true
			case strings.HasPrefix(s.Run, "go install "):
				if want := "go install " + module + "/cmd/mcpwatch@v" + job.Steps[slices.IndexFunc(job.Steps, func(s workflowStep) bool { return s.ID == "download" })].Env["MCPWATCH_VERSION"]; !downloaded || s.Run != want || s.If != fallback {
					t.Errorf("install step %q (if %q): want %s, after the download, only when it found no archive", s.Run, s.If, want)
				}
				installed = true
			case strings.HasPrefix(s.Run, "mcpwatch check"):
				if !installed {
					t.Error("mcpwatch check runs before mcpwatch is installed")
				}
				checkCommand(t, "the workflow", s.Run)
				checked = true
			}
		}
		if !downloaded || !installed || !checked {
			t.Errorf("job %s: downloaded %v, installed (fallback) %v, checked %v; want all", name, downloaded, installed, checked)
		}
	}
}

// runDownloadStep runs the example's download step with bash, as the runner
// would, against a stand-in for curl that serves a release from a folder: the
// archive whose checksum checksums.txt has is unpacked and put on the PATH;
// an archive that does not match its checksum fails the step; a release
// without an archive for the runner says so and leaves the install to go
// install.
func runDownloadStep(t *testing.T, script, version string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" || arch == "" {
		t.Skipf("the step runs on a Linux runner; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	archive := "mcpwatch_" + version + "_linux_" + arch + ".tar.gz"
	run := func(t *testing.T, release map[string][]byte) (out string, env map[string]string, err error) {
		t.Helper()
		dir := t.TempDir()
		served, bin, temp := filepath.Join(dir, "release"), filepath.Join(dir, "bin"), filepath.Join(dir, "runner")
		for _, d := range []string{served, bin, temp} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, data := range release {
			if err := os.WriteFile(filepath.Join(served, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// curl -fsSLO URL: copies the URL's last element from the release
		// folder, after checking the URL is the release's.
		curl := "#!/bin/sh\nurl=\"$2\"\ncase \"$url\" in https://github.com/mcpwatch/mcpwatch/releases/download/v" + version + "/*) ;; *) echo \"unexpected URL $url\" >&2; exit 3 ;; esac\n" +
			"cp \"" + served + "/${url##*/}\" . 2>/dev/null || { echo 'curl: (22) 404' >&2; exit 22; }\n"
		if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(curl), 0o755); err != nil {
			t.Fatal(err)
		}
		output, path := filepath.Join(dir, "output"), filepath.Join(dir, "path")
		cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", script) // GitHub's shell for run: on Linux
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RUNNER_TEMP="+temp,
			"GITHUB_OUTPUT="+output, "GITHUB_PATH="+path, "MCPWATCH_VERSION="+version)
		b, err := cmd.CombinedOutput()
		env = map[string]string{}
		if o, e := os.ReadFile(output); e == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(o)), "\n") {
				k, v, _ := strings.Cut(l, "=")
				env[k] = v
			}
		}
		if p, e := os.ReadFile(path); e == nil {
			env["PATH"] = strings.TrimSpace(string(p))
		}
		return string(b), env, err
	}
	tarball := func(t *testing.T, content string) []byte {
		t.Helper()
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, f := range []string{"LICENSE", "mcpwatch"} {
			if err := tw.WriteHeader(&tar.Header{Name: f, Mode: 0o755, Size: int64(len(content))}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	good := tarball(t, "#!/bin/sh\necho mcpwatch\n")
	sum := sha256.Sum256(good)
	checksums := []byte(fmt.Sprintf("%x  %s\n%x  mcpwatch_%s_darwin_arm64.tar.gz\n", sum, archive, sha256.Sum256(nil), version))

	t.Run("verified", func(t *testing.T) {
		out, env, err := run(t, map[string][]byte{archive: good, "checksums.txt": checksums})
		if err != nil || env["installed"] != "true" || env["PATH"] == "" {
			t.Fatalf("%v, outputs %v\n%s", err, env, out)
		}
		if b, err := os.ReadFile(filepath.Join(env["PATH"], "mcpwatch")); err != nil || !strings.Contains(string(b), "echo mcpwatch") {
			t.Errorf("mcpwatch not unpacked into the PATH it adds: %v", err)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		out, env, err := run(t, map[string][]byte{archive: tarball(t, "#!/bin/sh\necho evil\n"), "checksums.txt": checksums})
		if err == nil || env["installed"] == "true" || !strings.Contains(out, "FAILED") {
			t.Errorf("an archive that does not match its checksum: %v, outputs %v\n%s", err, env, out)
		}
	})
	t.Run("no archive", func(t *testing.T) {
		out, env, err := run(t, map[string][]byte{"checksums.txt": checksums})
		if err != nil || env["installed"] != "false" || !strings.Contains(out, "::warning::no "+archive) {
			t.Errorf("a release without the archive: %v, outputs %v\n%s", err, env, out)
		}
	})
}

// The install lines of the README and of docs/deployment.md name this
// module's command (at @latest or a release), and the GitHub Actions step of
// docs/preflight.md parses with check's own flags.
func TestDocsInstallAndCI(t *testing.T) {
	module, _ := goMod(t)
	install := regexp.MustCompile(`go install (\S+)@(\S+)`)
	for _, page := range []string{"README.md", "docs/deployment.md"} {
		text := string(readFile(t, "../../"+page))
		lines := install.FindAllStringSubmatch(text, -1)
		if len(lines) == 0 {
			t.Errorf("%s has no go install line", page)
		}
		for _, l := range lines {
			if l[1] != module+"/cmd/mcpwatch" {
				t.Errorf("%s: %q installs %s; want %s/cmd/mcpwatch", page, l[0], l[1], module)
			}
			if l[2] != "latest" && !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(l[2]) {
				t.Errorf("%s: %q: want @latest or a release @vX.Y.Z", page, l[0])
			}
		}
	}
	runs := regexp.MustCompile(`(?m)^\s*run: (mcpwatch check.*)$`).FindAllStringSubmatch(string(readFile(t, "../../docs/preflight.md")), -1)
	if len(runs) == 0 {
		t.Fatal("docs/preflight.md has no GitHub Actions step running mcpwatch check")
	}
	for _, r := range runs {
		checkCommand(t, "docs/preflight.md", r[1])
	}
}

// The Dockerfile builds the binary as 'make build' stamps it, static, and
// runs it as a non-root user on a minimal base, with flags serve accepts.
func TestDockerfile(t *testing.T) {
	_, goVersion := goMod(t)
	var froms, runs []string
	var user, cmd string
	dockerfile := strings.ReplaceAll(string(readFile(t, "../../Dockerfile")), "\\\n", " ") // continuation lines
	for _, line := range strings.Split(dockerfile, "\n") {
		line = strings.TrimSpace(line)
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "FROM":
			froms = append(froms, rest)
		case "RUN":
			runs = append(runs, rest)
		case "USER":
			user = rest
		case "CMD":
			cmd = rest
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[0], "golang:"+goVersion+"@sha256:") {
		t.Errorf("want a multi-stage build from golang:%s, pinned by digest: FROM %q", goVersion, froms)
	}
	if last := froms[len(froms)-1]; !strings.HasPrefix(last, "gcr.io/distroless/static") && last != "scratch" {
		t.Errorf("the final stage is FROM %s; want distroless static or scratch", last)
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("USER %q: want a non-root user", user)
	}
	build := strings.Join(runs, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/mcpwatch", "github.com/prometheus/common/version.Version=", "github.com/prometheus/common/version.Revision="} {
		if !strings.Contains(build, want) {
			t.Errorf("the build does not hold %q:\n%s", want, build)
		}
	}
	for _, stamp := range regexp.MustCompile(`-X (\S+)=`).FindAllStringSubmatch(build, -1) {
		if !strings.Contains(string(readFile(t, "../../Makefile")), "-X "+stamp[1]+"=") {
			t.Errorf("the image stamps %s, which 'make build' does not", stamp[1])
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(cmd), &args); err != nil || len(args) == 0 || args[0] != "serve" {
		t.Fatalf("CMD %s: want the exec form of serve: %v", cmd, err)
	}
	var f serveFlags
	fs := newServeFlagSet(&f)
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		t.Errorf("CMD %s: serve does not accept it: %v", cmd, err)
	}
	ignore := string(readFile(t, "../../.dockerignore"))
	for _, want := range []string{".git", "bin", "node_modules"} {
		if !strings.Contains(ignore, want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}

func TestCIBuildsTheImage(t *testing.T) {
	// .ci/run builds the image only where a docker engine answers.
	run := string(readFile(t, "../../.ci/run"))
	if !strings.Contains(run, "docker info") || !strings.Contains(run, "docker build") {
		t.Errorf(".ci/run does not build the image where docker is usable:\n%s", run)
	}
	if _, err := os.Stat("../../Dockerfile"); err != nil {
		t.Fatal(err)
	}
}
