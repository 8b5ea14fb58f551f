package doctor

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// otherSteps is the time a gate job's other steps are given besides the
// check: checking out, installing Go, node and mcpwatch, uploading.
const otherSteps = 5 * time.Minute

// Job timeouts when the file sets none: GitHub's timeout-minutes default
// (360), and GitLab's project default (1 h).
const (
	githubJobTimeout = 360 * time.Minute
	gitlabJobTimeout = time.Hour
)

// coldInstall is the start-up allowance a command that installs what it
// runs (npx -y, uvx, docker run) needs on a CI runner with nothing
// cached: a cold npx -y install of an MCP server takes 30-60 s, more on a
// loaded runner.
const coldInstall = time.Minute

// serverDeadline is the longest one server's check may take: its probe's
// deadline (--timeout on the command replaces every server's; a command
// that installs what it runs gets its start_timeout, since check starts
// every server afresh), and its canary calls', as config.Server.CallDeadline
// gives them to check's probe.
func serverDeadline(s config.Server, flagTimeout time.Duration) time.Duration {
	return s.CallDeadline(s.ProbeTimeout(flagTimeout, true), s.HasCalls(), s.AutoCalls)
}

// checkWorstCase is about the longest mcpwatch check of servers may take:
// the servers, longest first, in rounds of as many as run at once (stdio
// servers: at most stdio at once; all of them: at most all).
func checkWorstCase(servers []config.Server, each func(config.Server) time.Duration, all, stdio int) time.Duration {
	rounds := func(ds []time.Duration, width int) time.Duration {
		slices.SortFunc(ds, func(a, b time.Duration) int { return int(b - a) })
		var total time.Duration
		for i := 0; i < len(ds); i += max(width, 1) {
			total += ds[i]
		}
		return total
	}
	var every, local []time.Duration
	for _, s := range servers {
		d := each(s)
		every = append(every, d)
		if s.Command != "" {
			local = append(local, d)
		}
	}
	return max(rounds(every, all), rounds(local, min(stdio, all)))
}

// judgeStartup: each server whose command installs what it runs has a
// start-up allowance (config.Server.ProbeTimeout while starting: its
// start_timeout, default 2m) that lets a cold CI runner finish the
// install; a probe that ends first kills the install with it, and every
// run on a fresh runner fails with a timeout.
func (d *doctor) judgeStartup(c *candidate) {
	if c.source.cfg == nil {
		return
	}
	var fine []string
	for _, s := range c.probed() {
		installs := s.Installs()
		if installs == "" {
			continue
		}
		allowance := s.ProbeTimeout(c.flags.Timeout, true)
		if allowance >= coldInstall {
			fine = append(fine, fmt.Sprintf("%s (%s, %s)", s.Name, installs, allowance))
			continue
		}
		file, line := d.startTimeoutAt(c, s)
		c.add(finding("startup", file, line,
			fmt.Sprintf("server %q starts through %s, which installs what it runs first, with a start-up allowance of %s: on a CI runner with nothing cached the install alone takes 30-60 s, the probe's deadline ends it, and the check fails with a timeout", s.Name, installs, allowance),
			fmt.Sprintf("raise start_timeout for server %q (under the server, or defaults.start_timeout in an mcpwatch.yml) to at least %s, or remove it for the default %s", s.Name, coldInstall, config.DefaultStartTimeout)))
	}
	if len(fine) > 0 {
		c.note("start-up: %s", strings.Join(fine, ", "))
	}
}

// startTimeoutAt is where s's start_timeout is set: under the server, else
// under the configuration's defaults:, else the server's definition.
func (d *doctor) startTimeoutAt(c *candidate, s config.Server) (string, int) {
	if isYAML(s.Source) {
		if line, ok := keyAt(s.Source, "servers."+s.Name+".start_timeout"); ok {
			return d.rel(s.Source), line
		}
	}
	if cfg := c.source.path; isYAML(cfg) {
		if line, ok := keyAt(cfg, "defaults.start_timeout"); ok {
			return d.rel(cfg), line
		}
	}
	return d.rel(s.Source), serverLine(s)
}

func isYAML(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	return ext == ".yml" || ext == ".yaml"
}

// judgeTimeout: the job (and the step) give the check room for every
// server's deadline, package runners' cold start included.
func (d *doctor) judgeTimeout(c *candidate) {
	cfg := c.source.cfg
	if cfg == nil {
		return
	}
	file, j := c.step.job.file, c.step.job
	servers := c.probed()
	each := func(s config.Server) time.Duration { return serverDeadline(s, c.flags.Timeout) }
	stdio := cfg.Defaults.StdioConcurrency
	if cfg.Path == "" {
		stdio = cfg.Defaults.Concurrency // a client config starts all its servers at once
	}
	worst := checkWorstCase(servers, each, cfg.Defaults.Concurrency, stdio)

	budget, line, what := githubJobTimeout, j.line, "the default 360 minutes"
	if file.system == systemGitLab {
		budget, what = gitlabJobTimeout, "GitLab's default of 1 hour"
	}
	if j.timeout.set() {
		t, ok := parseJobTimeout(file.system, j.timeout.value)
		if !ok {
			c.note("timeout: job %s's timeout %s is only known when the job runs; the check may take up to %s", j.id, j.timeout.value, worst)
			return
		}
		budget, line, what = t, j.timeout.line, j.timeout.value
	}
	key := "timeout-minutes"
	if file.system == systemGitLab {
		key = "timeout"
	}
	if need := worst + otherSteps; budget < need {
		c.add(finding("timeout", file.path, line,
			fmt.Sprintf("job %s's %s (%s) leaves no room for the check: it may take up to %s (%d %s, each up to its deadline, a package runner's cold start included), besides some %d minutes for the other steps; a job cut off mid-check fails without saying which server was slow",
				j.id, key, what, worst.Round(time.Second), len(servers), plural(len(servers), "server", "servers"), int(otherSteps/time.Minute)),
			fmt.Sprintf("raise the %s of job %s to at least %s", key, j.id, formatTimeout(file.system, need))))
	} else {
		c.note("timeout: job %s has %s, the check at worst about %s", j.id, budget, worst.Round(time.Second))
	}
	if file.system == systemGitHub && c.step.timeout.set() {
		if t, ok := parseJobTimeout(systemGitHub, c.step.timeout.value); ok && t < worst {
			c.add(finding("timeout", file.path, c.step.timeout.line,
				fmt.Sprintf("%s has timeout-minutes %s: the check may take up to %s", c.stepName(), c.step.timeout.value, worst.Round(time.Second)),
				fmt.Sprintf("raise the step's timeout-minutes to at least %s, or remove it", formatTimeout(systemGitHub, worst))))
		}
	}
}

// formatTimeout writes d as the file's timeout key wants it, rounded up.
func formatTimeout(system string, d time.Duration) string {
	minutes := int((d + time.Minute - 1) / time.Minute)
	if system == systemGitLab {
		return fmt.Sprintf("%dm", minutes)
	}
	return strconv.Itoa(minutes)
}

var gitlabDurationPart = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b`)
})

// parseJobTimeout reads a job's timeout: GitHub's timeout-minutes (a
// number of minutes), GitLab's timeout ("1h 30m", "10 minutes", "3600").
func parseJobTimeout(system, v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if system == systemGitHub {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || m <= 0 {
			return 0, false
		}
		return time.Duration(m * float64(time.Minute)), true
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	parts := gitlabDurationPart().FindAllStringSubmatch(v, -1)
	if len(parts) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, p := range parts {
		n, _ := strconv.ParseFloat(p[1], 64)
		unit := time.Second
		switch strings.ToLower(p[2])[0] {
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		}
		total += time.Duration(n * float64(unit))
	}
	return total, true
}
