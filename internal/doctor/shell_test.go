package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeEnv resolves variables from a map; expressions env.NAME from it too.
type fakeEnv map[string]string

func (e fakeEnv) variable(name string) (string, bool) { v, ok := e[name]; return v, ok }
func (e fakeEnv) expression(expr string) (string, bool) {
	if name, ok := strings.CutPrefix(expr, "env."); ok {
		return e.variable(name)
	}
	return "", false
}

// describe writes each command as "line:op [words]" with its flags.
func describe(cmds []command) []string {
	var out []string
	for _, c := range cmds {
		var words []string
		for _, a := range c.assigns {
			words = append(words, a.name+"="+a.value.raw())
		}
		for _, w := range c.words {
			words = append(words, w.raw())
		}
		s := fmt.Sprintf("%d:%q %q", c.line, c.op, words)
		if c.prev != "" {
			s = c.prev + " " + s
		}
		if c.negated {
			s += " negated"
		}
		if c.condition {
			s += " condition"
		}
		out = append(out, s)
	}
	return out
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"words and quotes", `mcpwatch check --receipt "a b.json" -c 'x y' plain\ space`,
			[]string{`0:"" ["mcpwatch" "check" "--receipt" "a b.json" "-c" "x y" "plain space"]`}},
		{"continuations", "mcpwatch check \\\n  --strict \\\n  --format github\necho done",
			[]string{`0:"\n" ["mcpwatch" "check" "--strict" "--format" "github"]`, `3:"" ["echo" "done"]`}},
		{"and-or lists and pipes", "a && b || c | d; e &",
			[]string{`0:"&&" ["a"]`, `&& 0:"||" ["b"]`, `|| 0:"|" ["c"]`, `| 0:";" ["d"]`, `0:"&" ["e"]`}},
		{"comments", "# mcpwatch check --strict\necho hi # mcpwatch check",
			[]string{`1:"" ["echo" "hi"]`}},
		{"conditions and negation", "if mcpwatch check; then echo ok; fi\n! mcpwatch check\nwhile false; do :; done",
			[]string{`0:";" ["mcpwatch" "check"] condition`, `0:";" ["echo" "ok"]`, `1:"\n" ["mcpwatch" "check"] negated`,
				`2:";" ["false"] condition`, `2:";" [":"]`}},
		{"assignments and redirections", "X=1 Y=\"a b\" mcpwatch check 2>&1 >> \"$GITHUB_STEP_SUMMARY\"",
			[]string{`0:"" ["X=1" "Y=a b" "mcpwatch" "check"]`}},
		{"here documents are skipped", "cat <<EOF > x\nmcpwatch check\nEOF\ncat <<-'END'\n\tmcpwatch check\n\tEND\nmcpwatch version",
			[]string{`0:"\n" ["cat"]`, `3:"\n" ["cat"]`, `6:"" ["mcpwatch" "version"]`}},
		{"expansions", "mcpwatch check --receipt ${{ env.R }} -c $CFG --x=${OTHER} $(date) `id` $1",
			[]string{`0:"" ["mcpwatch" "check" "--receipt" "${{ env.R }}" "-c" "${CFG}" "--x=${OTHER}" "$(date)" "` + "`id`" + `" "$1"]`}},
		{"case patterns are no commands", "case $x in\n  a) mcpwatch check ;;\nesac",
			[]string{`1:";;" ["mcpwatch" "check"]`}},
		{"subshell", "( cd sub && mcpwatch check )",
			[]string{`( 0:"&&" ["cd" "sub"]`, `&& 0:")" ["mcpwatch" "check"]`}},
		{"quotes over lines", "echo 'a\nb' \"c\nd\"\nmcpwatch check",
			[]string{`0:"\n" ["echo" "a\nb" "c\nd"]`, `3:"" ["mcpwatch" "check"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(parseScript(tc.script))
			if !slices.Equal(got, tc.want) {
				t.Errorf("parseScript(%q):\n got %q\nwant %q", tc.script, got, tc.want)
			}
		})
	}
}

func TestWordResolve(t *testing.T) {
	env := fakeEnv{"R": "r.json", "DIR": "out"}
	cmds := parseScript(`x "$DIR/${{ env.R }}" ${{ matrix.cfg }} "$UNSET"`)
	for i, want := range []struct {
		text  string
		known bool
	}{{"out/r.json", true}, {"${{ matrix.cfg }}", false}, {"${UNSET}", false}} {
		text, known := cmds[0].words[i+1].resolve(env)
		if text != want.text || known != want.known {
			t.Errorf("word %d: got %q %v, want %q %v", i+1, text, known, want.text, want.known)
		}
	}
}

func TestFindInvocation(t *testing.T) {
	for _, tc := range []struct {
		script string
		via    string // "" for none
		args   string
	}{
		{"mcpwatch check --strict", "mcpwatch", "check --strict"},
		{"./bin/mcpwatch check", "mcpwatch", "check"},
		{`"$HOME/go/bin/mcpwatch" check`, "mcpwatch", "check"},
		{"env -u X TOKEN=1 time -p mcpwatch check", "mcpwatch", "check"},
		{"timeout -k 5s 10m sudo -E mcpwatch check -c x", "mcpwatch", "check -c x"},
		{"go run -tags x ./cmd/mcpwatch check", "go run", "check"},
		{"go run github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.1.0 check --strict", "go run", "check --strict"},
		{"go run ./cmd/other check", "", ""},
		{"docker run --rm -v $PWD:/w -w /w -e TOKEN ghcr.io/mcpwatch/mcpwatch:v0.1.0 check", "docker run", "check"},
		{"docker run --name mcpwatch alpine mcpwatch check", "", ""},
		{"echo mcpwatch check", "", ""},
		{"mcpwatch-scale check", "", ""},
	} {
		cmds := parseScript(tc.script)
		inv, ok := findInvocation(&cmds[0], fakeEnv{"HOME": "/home/runner"})
		var args []string
		for _, w := range inv.args {
			args = append(args, w.raw())
		}
		if ok != (tc.via != "") || inv.via != tc.via || strings.Join(args, " ") != tc.args {
			t.Errorf("%q: got %v %q %q, want %q %q", tc.script, ok, inv.via, args, tc.via, tc.args)
		}
	}
}

func TestSwallowed(t *testing.T) {
	bash := scriptState{cwd: ".", errexit: true, pipefail: true}
	sh := scriptState{cwd: ".", errexit: true}
	noE := scriptState{cwd: "."}
	for _, tc := range []struct {
		script string
		st     scriptState
		want   string // part of the reason; "" when the failure fails the step
	}{
		{"mcpwatch check", bash, ""},
		{"mcpwatch check\necho after", bash, ""},
		{"echo before && mcpwatch check\necho after", bash, ""},
		{"mcpwatch check || true", bash, "|| after it"},
		{"mcpwatch check || exit 78", bash, ""},
		{"mcpwatch check && echo ok", bash, ""},
		{"mcpwatch check && echo ok\necho after", bash, "&& after it"},
		{"mcpwatch check | tee log", bash, ""},
		{"mcpwatch check | tee log", sh, "without pipefail"},
		{"mcpwatch check\necho after", noE, "no -e"},
		{"mcpwatch check", noE, ""},
		{"if ! mcpwatch check; then exit 1; fi", bash, "negated"},
		{"if mcpwatch check; then echo ok; fi", bash, "condition"},
		{"mcpwatch check &\nwait", bash, "background"},
		{"false || mcpwatch check", bash, "only when the command before || fails"},
	} {
		cmds := parseScript(tc.script)
		i := slices.IndexFunc(cmds, func(c command) bool { return len(c.words) > 1 && c.words[0].raw() == "mcpwatch" })
		got := swallowed(cmds, i, finalList(cmds), tc.st)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestScriptState(t *testing.T) {
	sc := &scope{vars: map[string]envVar{"TOKEN": {name: "TOKEN", value: "x"}}, shell: map[string]string{}, unknown: map[string]bool{}}
	st := scriptState{cwd: ".", errexit: true, pipefail: true}
	for _, c := range parseScript("set +e -o pipefail\ncd sub/dir && cd ..\nexport R=out.json\nN=1\nset +o pipefail") {
		st.apply(&c, sc, 0)
	}
	if st.cwd != "sub" || st.errexit || st.pipefail {
		t.Errorf("state %+v", st)
	}
	if v, ok := sc.variable("R"); !ok || v != "out.json" || sc.vars["R"].value != "out.json" {
		t.Errorf("R: %q %v %+v", v, ok, sc.vars["R"])
	}
	if _, exported := sc.vars["N"]; exported {
		t.Error("N=1 alone is a shell variable, not exported")
	}
	st.apply(&parseScript("cd $(mktemp -d)")[0], sc, 0)
	if st.cwd != "" {
		t.Errorf("cd to an unknown place: cwd %q", st.cwd)
	}
}

func TestShellStops(t *testing.T) {
	for shell, want := range map[string][2]bool{
		"": {true, true}, "bash": {true, true}, "sh": {true, false}, "pwsh": {false, false},
		"bash {0}": {false, false}, "bash --noprofile --norc -eo pipefail {0}": {true, true}, "sh -e {0}": {true, false},
	} {
		e, p := shellStops(shell)
		if [2]bool{e, p} != want {
			t.Errorf("%q: errexit %v pipefail %v, want %v", shell, e, p, want)
		}
	}
}

func TestGitHubEnvWrites(t *testing.T) {
	s := &step{name: "token", script: "echo \"TOKEN=${{ steps.app.outputs.token }}\" >> \"$GITHUB_ENV\"\necho 'KEY<<EOF' >> $GITHUB_ENV\necho X=1 > other", lines: []int{10, 11, 12}}
	var got []string
	for _, v := range githubEnvWrites(s) {
		got = append(got, fmt.Sprintf("%s=%s@%d", v.name, v.value, v.line))
	}
	if want := []string{"TOKEN=${{ steps.app.outputs.token }}@10", "KEY=EOF@11"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParseScript(f *testing.F) {
	for _, s := range []string{"mcpwatch check \\\n --strict", "a && b || c", "cat <<EOF\nx\nEOF", "${{ x }} $(a \"b)\" `c", "'unterminated", "\"$(", "${", "case x in a) b;; esac"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range parseScript(s) {
			if c.line < 0 || c.line > strings.Count(s, "\n") {
				t.Fatalf("command at line %d of a script of %d lines", c.line, strings.Count(s, "\n")+1)
			}
			for _, w := range c.words {
				_, _ = w.resolve(fakeEnv{})
			}
		}
	})
}

// The shell reader is linear: a chain ten times as long costs about ten
// times as much, measured as a ratio (never against a wall clock). A
// quadratic reader costs a hundred times; the bound is 40.
func TestParseScriptLinear(t *testing.T) {
	cost := func(n int) time.Duration {
		src := strings.Repeat("true && ", n) + "mcpwatch check\n"
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if got := len(parseScript(src)); got != n+1 {
				t.Fatalf("%d commands, want %d", got, n+1)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := cost(5_000), cost(50_000)
	if ratio := float64(large) / float64(small); ratio > 40 {
		t.Errorf("50,000 links cost %v, %.0f times 5,000 (%v): the reader is not linear", large, ratio, small)
	}
}

// Redirections are no words, here strings and fd redirections included;
// a ${{ }} left open, $((...)) and a quote left open end the word, not the
// reader.
func TestParseScriptEdges(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"fd and here-string redirections", "mcpwatch check 2>&1 &>/dev/null <<<'x' 3<in --strict",
			[]string{`0:"" ["mcpwatch" "check" "--strict"]`}},
		{"an open ${{", "mcpwatch check --receipt ${{ env.R", []string{`0:"" ["mcpwatch" "check" "--receipt" "${{ env.R"]`}},
		{"arithmetic", "n=$((1 + 2)) && mcpwatch check", []string{`0:"&&" ["n=$((1 + 2))"]`, `&& 0:"" ["mcpwatch" "check"]`}},
		{"an open quote", "mcpwatch check 'oops", []string{`0:"" ["mcpwatch" "check" "oops"]`}},
		{"an escaped newline in double quotes", "mcpwatch check \"a\\\nb\"\necho", []string{`0:"\n" ["mcpwatch" "check" "ab"]`, `2:"" ["echo"]`}},
		{"a for loop is skipped", "for f in a b; do mcpwatch check -c $f; done", []string{`0:";" ["mcpwatch" "check" "-c" "${f}"]`}},
		{"|& and ;", "mcpwatch check |& tee log; echo", []string{`0:"|&" ["mcpwatch" "check"]`, `|& 0:";" ["tee" "log"]`, `0:"" ["echo"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(parseScript(tc.script)); !slices.Equal(got, tc.want) {
				t.Errorf("parseScript(%q):\n got %q\nwant %q", tc.script, got, tc.want)
			}
		})
	}
}

// The ways of running mcpwatch doctor reads, through a whole workflow: a
// docker:// action whose args are mcpwatch's, a working-directory, go run
// of its package, and variables the step or the script set.
func TestGateRunThroughOtherWays(t *testing.T) {
	t.Parallel()
	const run = "        run: mcpwatch check --strict --format github --receipt mcp-receipt.json\n"
	for _, tc := range []struct {
		name, new, command string
	}{
		{"a docker:// action", "        uses: docker://ghcr.io/mcpwatch/mcpwatch:v0.2.0\n        with:\n          args: check --strict --format github --receipt mcp-receipt.json\n",
			"mcpwatch check --strict --format github --receipt mcp-receipt.json"},
		{"go run of its package", "        run: go run github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.2.0 check --strict --format github --receipt mcp-receipt.json\n",
			"go run github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.2.0 check --strict --format github --receipt mcp-receipt.json"},
		{"docker run of its image", "        run: docker run --rm -v \"$PWD:/w\" -w /w -e REPORT_API_TOKEN ghcr.io/mcpwatch/mcpwatch:v0.2.0 check --strict --format github --receipt mcp-receipt.json\n",
			`docker run --rm -v ${PWD}:/w -w /w -e REPORT_API_TOKEN ghcr.io/mcpwatch/mcpwatch:v0.2.0 check --strict --format github --receipt mcp-receipt.json`},
		{"flags from the step's env", "        run: mcpwatch check $FLAGS --format github --receipt \"$R\"\n",
			"mcpwatch check ${FLAGS} --format github --receipt ${R}"},
		{"a working-directory and a relative config", "        working-directory: ./ci/..\n        run: |\n          cd sub && cd ..\n          mcpwatch check -c ./mcpwatch.yml --strict --format github --receipt mcp-receipt.json\n",
			"mcpwatch check -c ./mcpwatch.yml --strict --format github --receipt mcp-receipt.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, systemGitHub).editCI(t, run, tc.new)
			if tc.name == "flags from the step's env" {
				r.editCI(t, "          REPORT_API_TOKEN:", "          FLAGS: --strict\n          R: mcp-receipt.json\n          REPORT_API_TOKEN:")
			}
			rep := r.examine(t)
			holds(t, rep)
			if rep.Gate.Command != tc.command {
				t.Errorf("the gate's command %q, want %q", rep.Gate.Command, tc.command)
			}
		})
	}
}

// A value the workflow writes resolves through env. expressions of env
// values; GitLab's $OTHER in a variable, a loop of env references and an
// expression of anything else stay unknown.
func TestScopeResolves(t *testing.T) {
	t.Parallel()
	j := &job{file: &ciFile{system: systemGitHub, env: []envVar{{name: "A", value: "a"}, {name: "LOOP", value: "${{ env.LOOP }}"}}},
		env: []envVar{{name: "B", value: "${{ env.A }}/b"}}}
	sc := newScope(&step{job: j, env: []envVar{{name: "C", value: "${{ env.B }}/${{ secrets.X }}"}}}, nil)
	for _, tc := range []struct {
		expr string
		want string
		ok   bool
	}{
		{"env.A", "a", true},
		{"env.B", "a/b", true},
		{"env.C", "", false},
		{"env.LOOP", "", false},
		{"env.NONE", "", false},
		{"github.workspace", ".", true},
		{"matrix.x", "", false},
	} {
		if got, ok := sc.expression(tc.expr); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.expr, got, ok, tc.want, tc.ok)
		}
	}
	if v, ok := sc.variable("GITHUB_WORKSPACE"); v != "." || !ok {
		t.Errorf("$GITHUB_WORKSPACE: %q %v", v, ok)
	}
	gl := newScope(&step{job: &job{file: &ciFile{system: systemGitLab, env: []envVar{{name: "G", value: "$OTHER/x"}, {name: "L", value: "lit"}}}}}, nil)
	if _, ok := gl.variable("G"); ok {
		t.Error("GitLab's $OTHER in a variable is known before the run")
	}
	if v, ok := gl.variable("L"); v != "lit" || !ok {
		t.Errorf("a GitLab literal: %q %v", v, ok)
	}
	if got, ok := resolveString("  out dir/r.json ", sc); got != "out dir/r.json" || !ok {
		t.Errorf("a path with a space: %q %v", got, ok)
	}
}
