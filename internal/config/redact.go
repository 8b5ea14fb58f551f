package config

// What printing a server shows (config check, the status page, reports):
// its values redacted by internal/expand's rules (RedactValue, RedactURL,
// RedactArgs), which say what is shown and what is not.

import (
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Redacted is what a secret is printed as (secret.Redacted).
const Redacted = secret.Redacted

// RedactedServer is a Server fit to print or serve as JSON.
type RedactedServer struct {
	Name       string            `json:"name"`
	Source     string            `json:"source"`
	Command    string            `json:"command,omitempty"`
	Args       []string          `json:"args,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	EnvFile    string            `json:"env_file,omitempty"`
	Dir        string            `json:"cwd,omitempty"`
	InheritEnv bool              `json:"inherit_env,omitempty"`
	URL        string            `json:"url,omitempty"`
	Transport  probe.Transport   `json:"transport"`
	Headers    map[string]string `json:"headers,omitempty"`
	CAFile     string            `json:"ca_file,omitempty"`
	Insecure   bool              `json:"insecure_skip_verify,omitempty"`
	Timeout    jsondoc.Duration  `json:"timeout"`
	Schedule   string            `json:"schedule"`
	Era        probe.Era         `json:"era"`
	Forbid     []string          `json:"forbid,omitempty"`
	Auth       *RedactedAuth     `json:"auth,omitempty"`
	// Calls are the tools the server's contracts call (their inputs are in
	// the check report, redacted), with the call settings.
	Calls            []string         `json:"calls,omitempty"`
	ContractsFile    string           `json:"contracts_file,omitempty"`
	CallSchedule     string           `json:"call_schedule,omitempty"`
	CallTimeout      jsondoc.Duration `json:"call_timeout,omitempty"`
	AllowDestructive []string         `json:"allow_destructive_calls,omitempty"`
	// CallPlans say how often each contract is called (CallPlan), held
	// ones too.
	CallPlans []RedactedCallPlan `json:"call_plans,omitempty"`
}

// RedactedCallPlan is a CallPlan as config check shows it.
type RedactedCallPlan struct {
	Tool string `json:"tool"`
	// Schedule is "" for a contract that is not called (held).
	Schedule    string `json:"schedule"`
	CallsAMonth int    `json:"calls_a_month"`
	Why         string `json:"why,omitempty"`
}

// Redacted returns the server with its secrets replaced (rules above).
func (s Server) Redacted() RedactedServer {
	r := RedactedServer{
		Name: s.Name, Source: s.Source,
		Command: s.Command, EnvFile: s.EnvFile, Dir: s.Dir, InheritEnv: s.InheritEnv,
		Transport: s.Transport, CAFile: s.CAFile, Insecure: s.Insecure,
		Timeout: jsondoc.Duration(s.Timeout), Schedule: s.Schedule, Era: s.Era,
		Forbid: append([]string(nil), s.Forbid...),
		Args:   expand.RedactArgs(s.Args),
		URL:    expand.RedactURL(s.URL),
		Auth:   s.Auth.redacted(),
	}
	if s.HasCalls() {
		for _, c := range s.Contracts {
			r.Calls = append(r.Calls, c.Tool)
		}
		r.ContractsFile, r.CallSchedule, r.CallTimeout = s.ContractsFile, s.CallSchedule, jsondoc.Duration(s.CallTimeout)
		r.AllowDestructive = append([]string(nil), s.AllowDestructive...)
	}
	for _, p := range s.CallPlans() {
		r.CallPlans = append(r.CallPlans, RedactedCallPlan{Tool: p.Tool, Schedule: p.Schedule, CallsAMonth: p.PerMonth(), Why: p.Why})
	}
	if len(s.Env) > 0 {
		r.Env = make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			r.Env[k] = expand.RedactValue(v)
		}
	}
	if len(s.Headers) > 0 {
		r.Headers = make(map[string]string, len(s.Headers))
		for k, v := range s.Headers {
			r.Headers[k] = expand.RedactValue(v)
		}
	}
	return r
}
