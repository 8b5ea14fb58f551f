package dashboards_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// The project's dashboard conventions (after grafana's
// dashboard-linter), checked on a strictly decoded dashboard. Each check
// returns problems rather than failing, so the tests can show that a broken
// dashboard is caught.

const templatedUID = "${datasource}"

// decodeStrict decodes a dashboard, rejecting unknown fields, wrong types and
// missing required fields anywhere, panels and Prometheus queries included.
//
// In v0.0.22 the strict decoder reports errors well but drops the panels and
// queries that decoded without error: their nested decoders return a
// typed-nil cog.BuildErrors, which the caller takes for an error and skips.
// So the strict pass only validates, and the values come from a second,
// ordinary decode of the same bytes.
func decodeStrict(raw []byte) (*dashboard.Dashboard, error) {
	plugins.RegisterDefaultPlugins() // panel and query types; idempotent
	var strict dashboard.Dashboard
	err := strict.UnmarshalJSONStrict(raw)
	var berrs cog.BuildErrors
	if errors.As(err, &berrs) && len(berrs) == 0 {
		err = nil // the typed-nil "no error"
	}
	if err != nil {
		return nil, err
	}
	var d dashboard.Dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

type checked struct {
	problems []string
}

func (c *checked) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// query is one PromQL expression and where it was found.
type query struct {
	where string
	expr  string
}

// panels returns the dashboard's panels, those inside collapsed rows included.
func panels(d *dashboard.Dashboard) []*dashboard.Panel {
	var ps []*dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			ps = append(ps, p.Panel)
		}
		if p.RowPanel != nil {
			for i := range p.RowPanel.Panels {
				ps = append(ps, &p.RowPanel.Panels[i])
			}
		}
	}
	return ps
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func checkVariables(d *dashboard.Dashboard, c *checked) []query {
	var qs []query
	byName := map[string]dashboard.VariableModel{}
	var datasources int
	for _, v := range d.Templating.List {
		byName[v.Name] = v
		if v.Type == dashboard.VariableTypeDatasource {
			datasources++
			if q := v.Query; q == nil || q.String == nil || *q.String != "prometheus" {
				c.addf("variable %q: a datasource variable of type prometheus expected", v.Name)
			}
			continue
		}
		if v.Type == dashboard.VariableTypeQuery {
			if v.Datasource == nil || deref(v.Datasource.Uid) != templatedUID {
				c.addf("variable %q: query through $datasource (uid %q)", v.Name, templatedUID)
			}
			if v.Query != nil && v.Query.String != nil {
				qs = append(qs, query{where: "variable " + v.Name, expr: *v.Query.String})
			}
		}
	}
	if datasources != 1 || byName["datasource"].Type != dashboard.VariableTypeDatasource {
		c.addf("want exactly one variable of type datasource, named datasource; have %d", datasources)
	}
	for _, name := range []string{"job", "instance"} {
		v, ok := byName[name]
		switch {
		case !ok:
			c.addf("variable %q is missing", name)
		case v.Type != dashboard.VariableTypeQuery:
			c.addf("variable %q: type %q, want query", name, v.Type)
		case v.Multi == nil || !*v.Multi:
			c.addf("variable %q: must be multi-select", name)
		}
	}
	if v, ok := byName["server"]; !ok || v.Type != dashboard.VariableTypeQuery {
		c.addf("a query variable %q is missing", "server")
	}
	return qs
}

func checkPanels(d *dashboard.Dashboard, c *checked) []query {
	var qs []query
	ids := map[uint32]bool{}
	for _, p := range panels(d) {
		title := deref(p.Title)
		name := fmt.Sprintf("panel %q", title)
		if title == "" {
			c.addf("a %s panel has no title", p.Type)
		}
		if deref(p.Description) == "" {
			c.addf("%s: no description", name)
		}
		if p.Id == nil || ids[*p.Id] {
			c.addf("%s: missing or duplicate id", name)
		} else {
			ids[*p.Id] = true
		}
		if p.Datasource == nil || deref(p.Datasource.Uid) != templatedUID {
			c.addf("%s: datasource must be the $datasource variable (uid %q)", name, templatedUID)
		}
		if p.FieldConfig == nil || deref(p.FieldConfig.Defaults.Unit) == "" {
			c.addf("%s: no unit", name)
		}
		if g := p.GridPos; g == nil || g.X+g.W > 24 {
			c.addf("%s: grid position missing or wider than 24", name)
		}
		if len(p.Targets) == 0 {
			c.addf("%s: no query", name)
		}
		for i, t := range p.Targets {
			q, ok := t.(*prometheus.Dataquery)
			if !ok {
				c.addf("%s query %d: not a Prometheus query (%T)", name, i, t)
				continue
			}
			if q.Datasource == nil || deref(q.Datasource.Uid) != templatedUID {
				c.addf("%s query %d: datasource must be the $datasource variable", name, i)
			}
			qs = append(qs, query{where: fmt.Sprintf("%s query %s", name, deref(q.RefId)), expr: q.Expr})
		}
	}
	return qs
}

var (
	rangeSelector = regexp.MustCompile(`\[([^\]]*)\]`)
	rateCall      = regexp.MustCompile(`\b(rate|irate|increase)\(\s*[a-zA-Z_:][a-zA-Z0-9_:]*\s*(\{[^}]*\})?\s*\[([^\]]*)\]`)
	identifier    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// mcpwatch's own names, and the OpenTelemetry MCP client histogram it
	// exports: a change of that histogram's form (native instead of
	// _bucket series) shows here as a panel querying a name that is gone.
	mcpwatch = regexp.MustCompile(`\b(?:mcpwatch|mcp_client)_[a-zA-Z0-9_]+`)
)

// checkQueries applies the PromQL conventions to panel queries: every
// metric selector matches job and instance; rates use $__rate_interval; no
// hard-coded range.
func checkQueries(qs []query, c *checked) {
	for _, q := range qs {
		if strings.HasPrefix(q.where, "variable ") {
			continue
		}
		for _, m := range rateCall.FindAllStringSubmatch(q.expr, -1) {
			if m[3] != "$__rate_interval" {
				c.addf("%s: %s over [%s]; use [$__rate_interval]", q.where, m[1], m[3])
			}
		}
		for _, m := range rangeSelector.FindAllStringSubmatch(q.expr, -1) {
			if !slices.Contains([]string{"$__rate_interval", "$__range", "$__interval"}, m[1]) {
				c.addf("%s: hard-coded range [%s]", q.where, m[1])
			}
		}
		for _, sel := range selectors(q.expr) {
			if !strings.Contains(sel.matchers, `job=~"$job"`) || !strings.Contains(sel.matchers, `instance=~"$instance"`) {
				c.addf("%s: selector %s%s lacks job=~\"$job\" and instance=~\"$instance\"", q.where, sel.name, sel.matchers)
			}
		}
	}
}

type selector struct{ name, matchers string }

var (
	quoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	braced    = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	labelList = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	keywords  = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
)

// mask blanks the parts of expr matched by re, keeping every index in place.
func mask(expr string, re *regexp.Regexp) string {
	return re.ReplaceAllStringFunc(expr, func(m string) string { return strings.Repeat(" ", len(m)) })
}

// selectors finds the metric selectors of a PromQL expression: names that
// are not function calls, keywords or label names, with their {...} matcher
// list ("" when there is none). Strings, matcher lists, ranges and
// by/on/... label lists are masked out first.
func selectors(expr string) []selector {
	masked := mask(mask(mask(expr, quoted), braced), labelList)
	var out []selector
	for _, loc := range identifier.FindAllStringIndex(masked, -1) {
		name := masked[loc[0]:loc[1]]
		rest := strings.TrimLeft(masked[loc[1]:], " ")
		if strings.HasPrefix(rest, "(") || slices.Contains(keywords, name) {
			continue
		}
		matchers := ""
		if after := strings.TrimLeft(expr[loc[1]:], " "); strings.HasPrefix(after, "{") {
			matchers = after[:strings.Index(after, "}")+1]
		}
		out = append(out, selector{name: name, matchers: matchers})
	}
	return out
}

// checkMetricNames reports every mcpwatch_* name queried that mcpwatch does
// not export. exported holds the series names a query can use (a
// histogram's _bucket, _sum and _count included).
func checkMetricNames(qs []query, exported []string, c *checked) {
	for _, q := range qs {
		for _, name := range mcpwatch.FindAllString(q.expr, -1) {
			if !slices.Contains(exported, name) {
				c.addf("%s: queries %s, which mcpwatch does not export", q.where, name)
			}
		}
	}
}

func check(raw []byte, exported []string) []string {
	d, err := decodeStrict(raw)
	if err != nil {
		return []string{"strict decoding: " + err.Error()}
	}
	var c checked
	if want := dashboard.NewDashboard().SchemaVersion; d.SchemaVersion != want {
		c.addf("schemaVersion %d, want %d (grafana-foundation-sdk)", d.SchemaVersion, want)
	}
	if len(panels(d)) == 0 {
		c.addf("no panels decoded")
	}
	qs := checkVariables(d, &c)
	qs = append(qs, checkPanels(d, &c)...)
	checkQueries(qs, &c)
	checkMetricNames(qs, exported, &c)
	return c.problems
}
