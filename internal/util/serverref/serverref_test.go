package serverref

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	cases := []struct {
		cmd  string
		want string // "eco name version runner", or "" for none
	}{
		{"npx -y @modelcontextprotocol/server-github", "npm @modelcontextprotocol/server-github  npx"},
		{"npx -y @modelcontextprotocol/server-github@2025.4.8", "npm @modelcontextprotocol/server-github 2025.4.8 npx"},
		{"/usr/local/bin/npx --yes figma-developer-mcp@0.13.2 --stdio", "npm figma-developer-mcp 0.13.2 npx"},
		{"npx.cmd -y tavily-mcp@latest", "npm tavily-mcp latest npx"},
		{"cmd /c npx -y @stripe/mcp@^9.0.0 --tools=all", "npm @stripe/mcp ^9.0.0 npx"},
		{"npx -p @scope/pkg@1.0.0 pkg-bin --flag", "npm @scope/pkg 1.0.0 npx"},
		{"npx --package=@scope/pkg pkg-bin", "npm @scope/pkg  npx"},
		{"npx --registry https://r.example -y left-pad", "npm left-pad  npx"},
		{"npx -c 'echo @stripe/mcp'", ""},
		{"npx -- @stripe/mcp", "npm @stripe/mcp  npx"},
		{"npm exec -y -- @notionhq/notion-mcp-server", "npm @notionhq/notion-mcp-server  npm exec"},
		{"pnpm dlx @sentry/mcp-server@0.39.0", "npm @sentry/mcp-server 0.39.0 pnpm dlx"},
		{"bunx @upstash/context7-mcp", "npm @upstash/context7-mcp  bunx"},
		{"bun x @upstash/context7-mcp@4", "npm @upstash/context7-mcp 4 bunx"},
		{"uvx mcp-server-fetch", "pypi mcp-server-fetch  uvx"},
		{"uvx mcp-atlassian==0.11.9 --read-only", "pypi mcp-atlassian 0.11.9 uvx"},
		{"uvx --from mcp-atlassian@0.11.9 mcp-atlassian", "pypi mcp-atlassian 0.11.9 uvx"},
		{"uvx --python 3.12 awslabs.aws-api-mcp-server", "pypi awslabs.aws-api-mcp-server  uvx"},
		{"uv tool run mcp-server-git", "pypi mcp-server-git  uv tool run"},
		{"pipx run --spec mcp-server-time==1.0 mcp-server-time", "pypi mcp-server-time 1.0 pipx run"},
		{"docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server", "image ghcr.io/github/github-mcp-server  docker run"},
		{"docker run -i --rm --env=A=b -v /x:/y mcp/github:1.2", "image mcp/github 1.2 docker run"},
		{"podman container run --rm docker.io/mcp/brave-search@sha256:abc", "image mcp/brave-search sha256:abc podman run"},
		{"docker run -i ghcr.io/github/github-mcp-server:v0.20.1@sha256:abc", "image ghcr.io/github/github-mcp-server sha256:abc docker run"},
		{"docker run -i localhost:5000/img:2.0@sha256:abc", "image localhost:5000/img sha256:abc docker run"},
		{"docker run -p 8080:8080 localhost:5000/img", "image localhost:5000/img  docker run"},
		{"node /opt/x/node_modules/@modelcontextprotocol/server-github/dist/index.js", "npm @modelcontextprotocol/server-github  node"},
		{"node --enable-source-maps /x/node_modules/tavily-mcp/build/index.js", "npm tavily-mcp  node"},
		// No runner, or no package argument: nothing is claimed.
		{"mcp-server-github", ""},
		{"node server.js @modelcontextprotocol/server-github", ""},
		{"python -m mcp_server_fetch", ""},
		{"npx ./local/server.js", ""},
		{"npx https://example.com/pkg.tgz", ""},
		{"sh -c npx -y @stripe/mcp", ""},
		{"my-wrapper @stripe/mcp@1.0.0", ""},
		{"docker ps", ""},
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		args := f[1:]
		if c.cmd == "npx -c 'echo @stripe/mcp'" {
			args = []string{"-c", "echo @stripe/mcp"}
		}
		p, ok := Of(f[0], args)
		got := ""
		if ok {
			got = strings.Join([]string{string(p.Ecosystem), p.Name, p.Version, p.Runner}, " ")
		}
		if got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}

// A script inside a node_modules folder names its package and where it is
// installed, whose package.json says the version the command line does not.
func TestOfInstalled(t *testing.T) {
	for script, want := range map[string]string{
		"/opt/x/node_modules/@modelcontextprotocol/server-github/dist/index.js": "/opt/x/node_modules/@modelcontextprotocol/server-github",
		`C:\app\node_modules\tavily-mcp\build\index.js`:                         "C:/app/node_modules/tavily-mcp",
		"/a/node_modules/x/node_modules/y/index.js":                             "/a/node_modules/x/node_modules/y",
	} {
		p, ok := Of("node", []string{script})
		if !ok || p.Installed != want || p.Version != "" {
			t.Errorf("Of(node %s) = %+v, %v; want installed in %s, no version", script, p, ok, want)
		}
	}
	if p, _ := Of("npx", []string{"-y", "tavily-mcp@1.0.0"}); p.Installed != "" {
		t.Errorf("npx's package is installed nowhere the command says: %+v", p)
	}
}

func TestRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"1.2.3": true, "v0.39.0": true, "2025.4.8": true, "1": true, "1.2.3-rc.1": true,
		"": false, "latest": false, "next": false, "^9.0.0": false, "~1.2": false, ">=1": false,
		"1.x": false, "sha256:abc": false, "1.2.3.4": false, "1..2": false,
	} {
		if _, ok := (Package{Version: v}).Release(); ok != want {
			t.Errorf("Release(%q) = %v, want %v", v, ok, want)
		}
	}
}

func TestNormalURL(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://API.GitHubCopilot.com:443/mcp/":  "https://api.githubcopilot.com/mcp",
		"https://user:pw@mcp.example.com/x?y=1#z": "https://mcp.example.com/x",
		"http://h:80/":          "http://h",
		"https://h:8443/a/../b": "https://h:8443/b",
		"not a url":             "not a url",
	} {
		if got := NormalURL(in); got != want {
			t.Errorf("NormalURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalNames(t *testing.T) {
	if got := NormalPyPI("Mcp_Server..Fetch"); got != "mcp-server-fetch" {
		t.Errorf("NormalPyPI = %q", got)
	}
	if got := NormalImage("docker.io/library/Postgres"); got != "postgres" {
		t.Errorf("NormalImage = %q", got)
	}
}
