package releasecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// root is the repository, from this directory.
const root = "../../.."

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// load reads .goreleaser.yaml as GoReleaser reads it: strictly, so an unknown
// or misspelt key is an error, and every value into its type.
func load(t *testing.T) config.Project {
	t.Helper()
	p, err := config.Load(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return p
}

func TestConfigIsStrict(t *testing.T) {
	yml := strings.Replace(read(t, ".goreleaser.yaml"), "\n    binary: mcpwatch\n", "\n    binary: mcpwatch\n    binary_name: mcpwatch\n", 1)
	if _, err := config.LoadReader(strings.NewReader(yml)); err == nil || !strings.Contains(err.Error(), "binary_name") {
		t.Fatalf("a misspelt key loaded without an error naming it (%v): this test would miss one", err)
	}
}

// deprecated lists the fields set in v whose GoReleaser type marks them
// deprecated: 'goreleaser check' fails on them.
func deprecated(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, deprecated(v.Elem(), path)...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "" {
				name = f.Name
			}
			if strings.Contains(f.Tag.Get("jsonschema"), "deprecated=true") && !v.Field(i).IsZero() {
				out = append(out, path+name)
			}
			out = append(out, deprecated(v.Field(i), path+name+".")...)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			out = append(out, deprecated(v.Index(i), path)...)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out = append(out, deprecated(v.MapIndex(k), path)...)
		}
	}
	return out
}

// xVars returns the variables a set of ldflags stamps with -X.
func xVars(flags string) []string {
	var vars []string
	for _, m := range regexp.MustCompile(`-X\s+([\w./-]+)=`).FindAllStringSubmatch(flags, -1) {
		vars = append(vars, m[1])
	}
	slices.Sort(vars)
	return vars
}

func TestRelease(t *testing.T) {
	p := load(t)
	if p.Version != 2 {
		t.Errorf("version: %d, want 2 (GoReleaser v2's format)", p.Version)
	}
	if d := deprecated(reflect.ValueOf(p), ""); len(d) > 0 {
		t.Errorf("deprecated keys, which goreleaser check refuses: %v", d)
	}

	// One build: the command, static, stamped as 'make build' stamps it.
	if len(p.Builds) != 1 {
		t.Fatalf("%d builds, want mcpwatch's one", len(p.Builds))
	}
	b := p.Builds[0]
	if b.Main != "./cmd/mcpwatch" || b.Binary != "mcpwatch" {
		t.Errorf("builds main %q binary %q, want ./cmd/mcpwatch and mcpwatch", b.Main, b.Binary)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build env %v: want CGO_ENABLED=0, a static binary as the Makefile and the Dockerfile build", b.Env)
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("build flags %v: want -trimpath", b.Flags)
	}
	for _, want := range [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "arm64"}} {
		if !slices.Contains(b.Goos, want[0]) || !slices.Contains(b.Goarch, want[1]) {
			t.Errorf("no %s/%s build: goos %v goarch %v", want[0], want[1], b.Goos, b.Goarch)
		}
	}
	makeLd := regexp.MustCompile(`(?m)^LDFLAGS\s*:=((?:.*\\\n)*.*)$`).FindStringSubmatch(read(t, "Makefile"))
	if makeLd == nil {
		t.Fatal("the Makefile has no LDFLAGS := line")
	}
	ld := strings.Join(b.Ldflags, " ")
	if got, want := xVars(ld), xVars(makeLd[1]); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the release stamps %v, 'make build' stamps %v: keep them the same", got, want)
	}
	if !strings.Contains(ld, "version.Version=v{{ .Version }}") {
		t.Errorf("ldflags %q: the version must read as the tag does (v{{ .Version }}), as 'go install ...@vX.Y.Z' shows it", ld)
	}

	// Archives of that build, with the licence and what a reader needs.
	if len(p.Archives) != 1 || !slices.Equal(p.Archives[0].IDs, []string{b.ID}) {
		t.Fatalf("archives %+v: want one, of build %q", p.Archives, b.ID)
	}
	var files []string
	for _, f := range p.Archives[0].Files {
		files = append(files, f.Source)
		matches, err := filepath.Glob(filepath.Join(root, f.Source))
		if err != nil || len(matches) == 0 {
			t.Errorf("archive file %q matches nothing in the repository", f.Source)
		}
	}
	for _, want := range []string{"LICENSE", "NOTICE", "README.md", "CHANGELOG.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("the archives leave out %s (files: %v)", want, files)
		}
	}
	if p.Checksum.Disable || p.Checksum.Algorithm != "sha256" || p.Checksum.NameTemplate == "" {
		t.Errorf("checksum %+v: want a sha256 checksums file", p.Checksum)
	}

	// The images: that build, on the Dockerfile's bases (the default target
	// and the stdio one), tagged by version only, named as the Kubernetes
	// manifests name it, with their digests published.
	if len(p.DockersV2) != len(images) {
		t.Fatalf("%d dockers_v2 entries, want %d images: %v", len(p.DockersV2), len(images), images)
	}
	kustomization := read(t, "deploy/kubernetes/kustomization.yaml")
	for i, d := range p.DockersV2 {
		want := images[i]
		if d.Dockerfile != want.release {
			t.Errorf("image %s is built from %s, want %s", d.ID, d.Dockerfile, want.release)
		}
		if !slices.Equal(d.IDs, []string{b.ID}) {
			t.Errorf("image %s packs builds %v, want %q", d.ID, d.IDs, b.ID)
		}
		if _, err := os.Stat(filepath.Join(root, d.Dockerfile)); err != nil {
			t.Errorf("dockerfile: %v", err)
		}
		if len(d.Tags) == 0 {
			t.Errorf("image %s has no tag", d.ID)
		}
		for _, tag := range d.Tags {
			if tag != "v{{ .Version }}"+want.tagSuffix {
				t.Errorf("image %s tag %q: tag by version only (v{{ .Version }}%s); a tag that moves changes what runs unreviewed", d.ID, tag, want.tagSuffix)
			}
		}
		for _, image := range d.Images {
			if !strings.Contains(kustomization, "newName: "+image+"\n") {
				t.Errorf("image %s is not the one deploy/kubernetes runs", image)
			}
		}
		if !slices.Contains(d.Platforms, "linux/amd64") || !slices.Contains(d.Platforms, "linux/arm64") {
			t.Errorf("image %s platforms %v: want linux/amd64 and linux/arm64, as the binaries", d.ID, d.Platforms)
		}
	}
	if p.DockerDigest.Disable != "" && p.DockerDigest.Disable != "false" {
		t.Errorf("docker_digest is disabled: the release would not say the digest to pin")
	}

	// An SBOM of each archive, by syft.
	if len(p.SBOMs) != 1 || p.SBOMs[0].Artifacts != "archive" || p.SBOMs[0].Cmd != "syft" || len(p.SBOMs[0].Documents) != 1 {
		t.Errorf("sboms %+v: want one SBOM document per archive, written by syft", p.SBOMs)
	}
	// The checksums signed keylessly (no key to keep or leak): cosign's
	// bundle, with the certificate of the release workflow's identity.
	if len(p.Signs) != 1 || p.Signs[0].Artifacts != "checksum" || p.Signs[0].Cmd != "cosign" ||
		!slices.Contains(p.Signs[0].Args, "sign-blob") || !slices.Contains(p.Signs[0].Args, "--bundle=${signature}") {
		t.Errorf("signs %+v: want the checksums signed with cosign sign-blob into a bundle", p.Signs)
	}
	// Both images signed keylessly, by digest.
	if len(p.DockerSigns) != 1 || p.DockerSigns[0].Cmd != "cosign" || !slices.Contains(p.DockerSigns[0].Args, "${artifact}@${digest}") ||
		(p.DockerSigns[0].Artifacts != "" && p.DockerSigns[0].Artifacts != "all") {
		t.Errorf("docker_signs %+v: want the images of dockers_v2 signed with cosign by digest", p.DockerSigns)
	}
	for _, args := range [][]string{p.Signs[0].Args, p.DockerSigns[0].Args} {
		for _, a := range args {
			if strings.HasPrefix(a, "--key") {
				t.Errorf("cosign %v signs with a key: sign keylessly, with the workflow's identity", args)
			}
		}
	}
}

// images are the release's images in .goreleaser.yaml's order: the
// Dockerfile for it, the stage of ./Dockerfile it must match ("" for the
// last, the default target) and its tag after the version.
var images = []struct {
	release, stage, tagSuffix string
}{
	{"Dockerfile.release", "", ""},
	{"Dockerfile.release-stdio", "stdio", "-stdio"},
}

// stage returns the instructions of a Dockerfile's stage (name, or the last
// when ""), continuation lines joined, comments and the stage's own name
// left out, and the lines that put the mcpwatch binary in (a build stage's
// output in ./Dockerfile, GoReleaser's binary in a release's) set apart.
func stage(t *testing.T, file, name string) (lines []string, copyBinary string) {
	t.Helper()
	text := strings.ReplaceAll(read(t, file), "\\\n", " ")
	found := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		word, rest, _ := strings.Cut(line, " ")
		switch {
		case word == "FROM":
			base, as, _ := strings.Cut(rest, " AS ")
			if found && name != "" {
				return lines, copyBinary
			}
			found = name == "" || as == name
			lines, copyBinary = []string{"FROM " + base}, ""
		case !found || line == "" || strings.HasPrefix(line, "#"):
		case word == "ARG" && rest == "TARGETPLATFORM":
		case word == "COPY" && strings.HasSuffix(rest, " /usr/local/bin/mcpwatch"):
			copyBinary = rest
		default:
			lines = append(lines, line)
		}
	}
	if !found {
		t.Fatalf("%s has no stage %q", file, name)
	}
	return lines, copyBinary
}

// Each release image runs as the image 'docker build' makes of its target
// of ./Dockerfile: same base, packages, user, environment, port, entry
// point and command; only where the binary comes from differs.
func TestReleaseDockerfilesMatchDockerfile(t *testing.T) {
	p := load(t)
	for i, d := range p.DockersV2 {
		img := images[i]
		want, fromBuild := stage(t, "Dockerfile", img.stage)
		got, fromRelease := stage(t, d.Dockerfile, "")
		if len(want) < 6 || !slices.Equal(got, want) {
			t.Errorf("%s's image differs from the Dockerfile's %q stage:\n got  %q\n want %q", d.Dockerfile, img.stage, got, want)
		}
		if !strings.HasPrefix(fromBuild, "--from=build /out/mcpwatch ") {
			t.Errorf("the Dockerfile's %q stage does not copy the binary it built (COPY --from=build /out/mcpwatch): %q", img.stage, fromBuild)
		}
		if strings.Contains(read(t, d.Dockerfile), " AS uv\n") {
			// the same uv as the Dockerfile's
			if got, want := stageOf(t, d.Dockerfile, "uv"), stageOf(t, "Dockerfile", "uv"); !slices.Equal(got, want) {
				t.Errorf("%s takes uv from %q, the Dockerfile from %q", d.Dockerfile, got, want)
			}
		}
		if !strings.HasPrefix(fromRelease, "$TARGETPLATFORM/mcpwatch ") {
			t.Errorf("%s does not copy the binary GoReleaser built ($TARGETPLATFORM/mcpwatch): %q", d.Dockerfile, fromRelease)
		}
	}
}

func stageOf(t *testing.T, file, name string) []string {
	t.Helper()
	lines, _ := stage(t, file, name)
	return lines
}

// The default target is the distroless image with mcpwatch alone; the
// stdio target has what npx and uvx servers need, and tini to reap what a
// package runner leaves behind.
func TestDockerfileTargets(t *testing.T) {
	last, _ := stage(t, "Dockerfile", "")
	if !regexp.MustCompile(`^FROM gcr\.io/distroless/static-debian12:nonroot@sha256:[0-9a-f]{64}$`).MatchString(last[0]) {
		t.Errorf("the default target is %q, want the distroless image", last[0])
	}
	stdio, _ := stage(t, "Dockerfile", "stdio")
	text := strings.Join(stdio, "\n")
	for _, want := range []string{"FROM node:", "python3", "tini", "COPY --from=uv /uv /uvx /usr/local/bin/",
		"USER 65532:65532", `ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/mcpwatch"]`, "HOME=/home/mcpwatch"} {
		if !strings.Contains(text, want) {
			t.Errorf("the stdio target lacks %q:\n%s", want, text)
		}
	}
	uv, _ := stage(t, "Dockerfile", "uv")
	if !regexp.MustCompile(`^FROM ghcr\.io/astral-sh/uv:\d+\.\d+\.\d+@sha256:[0-9a-f]{64}$`).MatchString(uv[0]) {
		t.Errorf("uv comes from %q: pin a version of ghcr.io/astral-sh/uv, and its digest", uv[0])
	}
}

// dockerfiles are the files whose base images scripts/base-digests.sh keeps
// pinned.
var dockerfiles = []string{"Dockerfile", "Dockerfile.release", "Dockerfile.release-stdio"}

// pinned matches a FROM of an image pinned by digest, the tag beside it for
// people (and for scripts/base-digests.sh, which asks for the tag's current
// digest): FROM IMAGE:TAG@sha256:DIGEST [AS NAME].
var pinned = regexp.MustCompile(`^FROM ([a-z0-9./_-]+:[\w.-]+)@(sha256:[0-9a-f]{64})(?: AS [\w-]+)?$`)

// Every base image is pinned by digest, which no push can move (a tag, even
// a version's, is rebuilt by its publisher), with its tag beside it; a stage
// may start from an earlier stage by name. One image has one digest in all
// the files, so the release images are what the Dockerfile builds and tests.
func TestBaseImagesPinned(t *testing.T) {
	digests := map[string]string{}
	for _, file := range dockerfiles {
		stages := map[string]bool{}
		for _, line := range strings.Split(read(t, file), "\n") {
			line = strings.Join(strings.Fields(line), " ")
			if !strings.HasPrefix(line, "FROM ") {
				continue
			}
			base, as, _ := strings.Cut(strings.TrimPrefix(line, "FROM "), " AS ")
			if as != "" {
				stages[as] = true
			}
			if stages[base] && base != as {
				continue
			}
			m := pinned.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: %q: pin the base image by digest, IMAGE:TAG@sha256:... (scripts/base-digests.sh writes it)", file, line)
				continue
			}
			if d, ok := digests[m[1]]; ok && d != m[2] {
				t.Errorf("%s pins %s at %s, another file at %s: one image, one digest (scripts/base-digests.sh)", file, m[1], m[2], d)
			}
			digests[m[1]] = m[2]
		}
	}
	if len(digests) < 4 {
		t.Errorf("base images found: %v; want Go, uv, node and distroless", digests)
	}
}

// scripts/base-digests.sh asks for each tag's current digest and rewrites
// every pin of that image, in all three files; --check only lists the stale
// ones and fails. Run against a stand-in for docker that says one tag has
// moved.
func TestBaseDigestsScript(t *testing.T) {
	dir := t.TempDir()
	for _, f := range append(dockerfiles, "scripts/base-digests.sh") {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(read(t, f)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	moved := "sha256:" + strings.Repeat("ab", 32)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// docker buildx imagetools inspect REF: node's tag has moved to moved,
	// the others are where the Dockerfile pins them.
	fake := `#!/bin/sh
[ "$1 $2 $3" = "buildx imagetools inspect" ] || { echo "unexpected: $*" >&2; exit 2; }
case "$4" in
node:*) d=` + moved + ` ;;
*) d=$(grep -o "^FROM $4@sha256:[0-9a-f]*" Dockerfile | sed 's/.*@//') ;;
esac
printf 'Name:      %s
MediaType: application/vnd.oci.image.index.v1+json
Digest:    %s

Manifests:
  Name:      %s@sha256:0000
' "$4" "$d" "$4"
`
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(dir, "scripts/base-digests.sh"), args...)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("--check")
	if err == nil || !strings.Contains(out, "node:24-bookworm-slim: pinned sha256:") || !strings.Contains(out, moved) {
		t.Fatalf("--check with node's tag moved: %v\n%s", err, out)
	}
	if strings.Contains(read(t, "Dockerfile"), moved) {
		t.Fatal("--check changed a file")
	}
	if out, err := run(); err != nil {
		t.Fatalf("update: %v\n%s", err, out)
	}
	for _, f := range []string{"Dockerfile", "Dockerfile.release-stdio"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "FROM node:24-bookworm-slim@"+moved) {
			t.Errorf("%s: node's pin was not moved to %s:\n%s", f, moved, b)
		}
		if want := stageOf(t, f, "uv"); f == "Dockerfile" && !strings.Contains(string(b), want[0]) {
			t.Errorf("%s: uv's current pin %q was changed", f, want[0])
		}
	}
	if out, err := run("--check"); err != nil {
		t.Errorf("--check after the update: %v\n%s", err, out)
	}
}
