// Package mixin renders mcpwatch's monitoring mixin (mixin.libsonnet): the
// alert and recording rules as Prometheus rule files, and the Grafana
// dashboard, as a jsonnet tool would, with go-jsonnet. It is a Go module of
// its own, so that go-jsonnet stays out of mcpwatch's module graph.
package mixin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-jsonnet"
	"go.yaml.in/yaml/v3"
)

// The files the mixin makes, relative to its directory.
const (
	AlertsFile    = "prometheus-alerts.yaml"
	RulesFile     = "prometheus-rules.yaml"
	DashboardFile = "dashboards_out/mcpwatch.json"
	// The copies the Helm chart ships: a chart reads only files inside it.
	HelmAlertsFile = "../deploy/helm/mcpwatch/files/prometheus-alerts.yaml"
	HelmRulesFile  = "../deploy/helm/mcpwatch/files/prometheus-rules.yaml"
)

// Render evaluates the mixin in dir with override merged over it (jsonnet
// merged into the mixin, such as `{ _config+:: { mcpwatchSelector:
// 'job="x"' } }`; "" for none) and returns each file it makes, by its path
// relative to dir.
func Render(dir, override string) (map[string][]byte, error) {
	if override == "" {
		override = "{}"
	}
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{dir}})
	snippet := "local m = (import 'mixin.libsonnet') + (" + override + ");\n" +
		"{ alerts: m.prometheusAlerts, rules: m.prometheusRules, dashboards: m.grafanaDashboards }"
	out, err := vm.EvaluateAnonymousSnippet(filepath.Join(dir, "render.jsonnet"), snippet)
	if err != nil {
		return nil, err
	}
	var parts struct {
		Alerts, Rules json.RawMessage
		Dashboards    map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &parts); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	source := "mixin/alerts/alerts.libsonnet"
	for _, f := range []struct {
		name, source string
		doc          json.RawMessage
	}{
		{AlertsFile, source, parts.Alerts},
		{HelmAlertsFile, source, parts.Alerts},
		{RulesFile, "mixin/rules/rules.libsonnet", parts.Rules},
		{HelmRulesFile, "mixin/rules/rules.libsonnet", parts.Rules},
	} {
		b, err := rulesYAML(f.doc, f.source)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		files[f.name] = b
	}
	d, ok := parts.Dashboards["mcpwatch.json"]
	if !ok || len(parts.Dashboards) != 1 {
		return nil, fmt.Errorf("grafanaDashboards: want mcpwatch.json alone, got %d dashboards", len(parts.Dashboards))
	}
	var b bytes.Buffer
	if err := json.Indent(&b, d, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	files[DashboardFile] = b.Bytes()
	return files, nil
}

// Write renders the mixin in dir and writes its files.
func Write(dir string) error {
	files, err := Render(dir, "")
	if err != nil {
		return err
	}
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: a directory of the repository, readable by all
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil { //nolint:gosec // G306: a file committed to the repository, readable by all
			return err
		}
	}
	return nil
}

// keyOrder is the order of a rule file's keys, as people write them; any
// other key follows, in the jsonnet's (sorted) order.
var keyOrder = []string{"name", "interval", "rules", "alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations", "summary", "description", "runbook_url"}

// rulesYAML writes a rule file's JSON as YAML for people: keys in the usual
// order, a multi-line string (an expression) as a literal block, under a
// header that says where it comes from.
func rulesYAML(doc json.RawMessage, source string) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return nil, err
	}
	style(&n)
	var b bytes.Buffer
	b.WriteString("# Generated from " + source + " (the mcpwatch mixin) by mixin/gen; DO NOT EDIT.\n" +
		"# Change the jsonnet, then run: cd mixin && go generate ./...\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func style(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		n.Style = 0
		for _, c := range n.Content {
			style(c)
		}
	case yaml.MappingNode:
		n.Style = 0
		type pair struct{ k, v *yaml.Node }
		pairs := make([]pair, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		rank := func(k string) int {
			if i := slices.Index(keyOrder, k); i >= 0 {
				return i
			}
			return len(keyOrder)
		}
		slices.SortStableFunc(pairs, func(a, b pair) int { return rank(a.k.Value) - rank(b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			p.k.Style = 0
			style(p.v)
			n.Content = append(n.Content, p.k, p.v)
		}
	case yaml.ScalarNode:
		switch {
		case n.Tag != "!!str":
			n.Style = 0
		case strings.Contains(n.Value, "\n"):
			n.Style = yaml.LiteralStyle
		default:
			n.Style = 0
		}
	}
}
