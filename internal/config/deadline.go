package config

import "time"

// Install is what explains the timeout of a first start of a command that
// installs what it runs (a package download, an image pull).
type Install struct {
	Installs     string // "npx", "pipx run", "docker run"...; "" none (see Server.Installs)
	Args         []string
	Dir          string // the server's cwd as written
	NpmCache     string // the server's npm_config_cache as written
	StartTimeout time.Duration
}

// Install is s's Install.
func (s Server) Install() Install {
	return Install{Installs: s.Installs(), Args: s.Args, Dir: s.Dir, NpmCache: s.Env["npm_config_cache"], StartTimeout: s.StartTimeout}
}

// ProbeTimeout is the deadline of one probe of s: override when positive
// (the CLI's --timeout), else the server's own; and, while starting (the
// first probe of the command since mcpwatch started, the configuration
// was reloaded or the command changed, until a probe ends other than by
// its deadline), at least s.StartTimeout when the command installs what it
// runs (Installs): a cold npx -y install takes far longer than a probe,
// and a probe that ends first kills the install with it. check, lock and
// probe start every server afresh, so each of their probes is starting.
func (s Server) ProbeTimeout(override time.Duration, starting bool) time.Duration {
	t := s.Timeout
	if override > 0 {
		t = override
	}
	if starting && s.Installs() != "" {
		t = max(t, s.StartTimeout)
	}
	return t
}

// CallDeadline is the deadline of a probe of s: the probe's own
// (probeTimeout), then a call timeout for each call it may make: each
// contract's when it makes them (contracts), and each auto call (auto).
// The probe of check, lock, serve and init and doctor's sum of a job's
// time all take it from here.
func (s Server) CallDeadline(probeTimeout time.Duration, contracts bool, auto int) time.Duration {
	n := max(auto, 0)
	if contracts {
		n += len(s.Contracts)
	}
	return probeTimeout + time.Duration(n)*s.CallTimeout
}
