// Package registry reads the MCP Registry: server.json entries, from a
// registry's API (the official one at registry.modelcontextprotocol.io, or
// any registry with its API shape) or from a file, and turns the entries it
// can watch into server definitions.
//
// A remote entry becomes an HTTP server (streamable-http or sse). A URL
// template variable and a header the user must fill become ${VAR}
// references; a secret one never gets a value. A package entry (npm, pypi,
// oci, nuget) becomes a stdio server only when the caller enables packages:
// it runs someone else's code. Deleted entries are dropped. Every published
// version of the server.json schema is read: 2025-07-09 (snake_case,
// version_detail) to 2025-12-11 and the draft after it.
package registry

import (
	"encoding/json"
	"strings"
	"time"
)

// Entry is one server.json entry, with the registry's metadata.
type Entry struct {
	Name     string
	Version  string
	Schema   string // the $schema URL, as written
	Status   string // active, deprecated or deleted ("" when the registry says nothing)
	Updated  time.Time
	IsLatest bool // false only when the registry says so
	Remotes  []Remote
	Packages []Package
}

// Remote is a server reachable over HTTP.
type Remote struct {
	Type      string // streamable-http or sse
	URL       string // may hold {variable} templates
	Headers   []Input
	Variables map[string]Input
}

// Package is a server distributed as a package and run locally.
type Package struct {
	RegistryType string // npm, pypi, oci, nuget, mcpb
	Identifier   string
	Version      string
	RuntimeHint  string
	Transport    string // stdio, streamable-http, sse
	RuntimeArgs  []Input
	PackageArgs  []Input
	Env          []Input
}

// Input is a header, an environment variable, an argument or a URL
// variable the user may have to provide.
type Input struct {
	Name        string // header or variable name; the flag for a named argument
	Type        string // positional or named, for arguments
	ValueHint   string
	Description string
	Required    bool
	Secret      bool
	Value       string // may hold {variable} templates
	Default     string
	Variables   map[string]Input
}

// rawEntry reads both shapes of a list item and both spellings of the
// fields: the API's {"server": {...}, "_meta": {...}} since 2025-09-29 and
// the server object itself before; camelCase since 2025-09-16 and
// snake_case before.
type rawEntry struct {
	Server *rawServer                  `json:"server"`
	Meta   map[string]*json.RawMessage `json:"_meta"`
	rawServer
}

type rawServer struct {
	Schema        string                      `json:"$schema"`
	Name          string                      `json:"name"`
	Version       string                      `json:"version"`
	VersionDetail *struct{ Version string }   `json:"version_detail"`
	Status        string                      `json:"status"`
	Remotes       []rawTransport              `json:"remotes"`
	Packages      []rawPackage                `json:"packages"`
	Meta          map[string]*json.RawMessage `json:"_meta"`
}

type rawTransport struct {
	Type      string              `json:"type"`
	URL       string              `json:"url"`
	Headers   []rawInput          `json:"headers"`
	Variables map[string]rawInput `json:"variables"`
}

type rawPackage struct {
	RegistryType         string       `json:"registryType"`
	RegistryTypeSnake    string       `json:"registry_type"`
	Identifier           string       `json:"identifier"`
	Version              string       `json:"version"`
	RuntimeHint          string       `json:"runtimeHint"`
	RuntimeHintSnake     string       `json:"runtime_hint"`
	Transport            rawTransport `json:"transport"`
	RuntimeArguments     []rawInput   `json:"runtimeArguments"`
	RuntimeArgumentsOld  []rawInput   `json:"runtime_arguments"`
	PackageArguments     []rawInput   `json:"packageArguments"`
	PackageArgumentsOld  []rawInput   `json:"package_arguments"`
	EnvironmentVariables []rawInput   `json:"environmentVariables"`
	EnvironmentVarsOld   []rawInput   `json:"environment_variables"`
}

type rawInput struct {
	Name           string              `json:"name"`
	Type           string              `json:"type"`
	ValueHint      string              `json:"valueHint"`
	ValueHintSnake string              `json:"value_hint"`
	Description    string              `json:"description"`
	IsRequired     *bool               `json:"isRequired"`
	IsRequiredOld  *bool               `json:"is_required"`
	IsSecret       *bool               `json:"isSecret"`
	IsSecretOld    *bool               `json:"is_secret"`
	Value          string              `json:"value"`
	Default        string              `json:"default"`
	Variables      map[string]rawInput `json:"variables"`
}

// officialMeta is the registry's own metadata of an entry: under
// io.modelcontextprotocol.registry/official (camelCase), or, before
// 2025-09-29, io.modelcontextprotocol.registry (snake_case).
type officialMeta struct {
	Status         string    `json:"status"`
	UpdatedAt      time.Time `json:"updatedAt"`
	UpdatedAtSnake time.Time `json:"updated_at"`
	IsLatest       *bool     `json:"isLatest"`
	IsLatestSnake  *bool     `json:"is_latest"`
}

const (
	metaOfficial = "io.modelcontextprotocol.registry/official"
	metaLegacy   = "io.modelcontextprotocol.registry"
)

func (r rawEntry) entry() Entry {
	s := r.rawServer
	meta := r.Meta
	if r.Server != nil {
		s = *r.Server
	} else {
		meta = s.Meta
	}
	e := Entry{Name: s.Name, Version: s.Version, Schema: s.Schema, Status: s.Status, IsLatest: true}
	if e.Version == "" && s.VersionDetail != nil {
		e.Version = s.VersionDetail.Version
	}
	for _, key := range []string{metaOfficial, metaLegacy} {
		raw := meta[key]
		if raw == nil {
			continue
		}
		var m officialMeta
		if json.Unmarshal(*raw, &m) != nil {
			continue
		}
		if m.Status != "" {
			e.Status = m.Status
		}
		e.Updated = m.UpdatedAt
		if e.Updated.IsZero() {
			e.Updated = m.UpdatedAtSnake
		}
		if l := first(m.IsLatest, m.IsLatestSnake); l != nil {
			e.IsLatest = *l
		}
		break
	}
	for _, t := range s.Remotes {
		e.Remotes = append(e.Remotes, t.remote())
	}
	for _, p := range s.Packages {
		e.Packages = append(e.Packages, Package{
			RegistryType: strings.ToLower(or(p.RegistryType, p.RegistryTypeSnake)),
			Identifier:   p.Identifier, Version: p.Version,
			RuntimeHint: or(p.RuntimeHint, p.RuntimeHintSnake),
			Transport:   p.Transport.Type,
			RuntimeArgs: inputs(orList(p.RuntimeArguments, p.RuntimeArgumentsOld)),
			PackageArgs: inputs(orList(p.PackageArguments, p.PackageArgumentsOld)),
			Env:         inputs(orList(p.EnvironmentVariables, p.EnvironmentVarsOld)),
		})
	}
	return e
}

func (t rawTransport) remote() Remote {
	r := Remote{Type: t.Type, URL: t.URL, Headers: inputs(t.Headers)}
	if len(t.Variables) > 0 {
		r.Variables = map[string]Input{}
		for k, v := range t.Variables {
			r.Variables[k] = v.input()
		}
	}
	return r
}

func (i rawInput) input() Input {
	in := Input{Name: i.Name, Type: i.Type, ValueHint: or(i.ValueHint, i.ValueHintSnake), Description: i.Description,
		Value: i.Value, Default: i.Default}
	if b := first(i.IsRequired, i.IsRequiredOld); b != nil {
		in.Required = *b
	}
	if b := first(i.IsSecret, i.IsSecretOld); b != nil {
		in.Secret = *b
	}
	if len(i.Variables) > 0 {
		in.Variables = map[string]Input{}
		for k, v := range i.Variables {
			in.Variables[k] = v.input()
		}
	}
	return in
}

func inputs(list []rawInput) []Input {
	var out []Input
	for _, i := range list {
		out = append(out, i.input())
	}
	return out
}

func first(a, b *bool) *bool {
	if a != nil {
		return a
	}
	return b
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orList(a, b []rawInput) []rawInput {
	if len(a) > 0 {
		return a
	}
	return b
}
