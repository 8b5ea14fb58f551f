package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// Label matchers every query carries: the fleet (job and instance variables)
// and, in the per-server row, the server variable too.
const (
	fleet = `job=~"$job",instance=~"$instance"`
	one   = fleet + `,server=~"$server"`
)

// datasource is the templated data source every panel and query uses, so
// the dashboard works with file provisioning and any Prometheus.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// series is a range query drawn over time.
func series(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasource()).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

// instant is a query for the latest value, shaped as a table (one row per
// series, labels as columns) when asTable is set.
func instant(expr string, asTable bool) *prometheus.DataqueryBuilder {
	q := prometheus.NewDataqueryBuilder().
		Datasource(datasource()).
		Expr(expr).
		Instant()
	if asTable {
		q = q.Format(prometheus.PromQueryFormatTable)
	}
	return q
}

// thresholds builds absolute thresholds: a base colour, then value/colour pairs.
func thresholds(base string, steps ...any) *dashboard.ThresholdsConfigBuilder {
	list := []dashboard.Threshold{{Color: base}}
	for i := 0; i+1 < len(steps); i += 2 {
		list = append(list, dashboard.Threshold{Value: cog.ToPtr(steps[i].(float64)), Color: steps[i+1].(string)})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(list)
}

// okFailed maps a 0/1 success value to words and colours.
func okFailed() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"1": {Text: cog.ToPtr("OK"), Color: cog.ToPtr("green"), Index: cog.ToPtr[int32](0)},
			"0": {Text: cog.ToPtr("FAILED"), Color: cog.ToPtr("red"), Index: cog.ToPtr[int32](1)},
		},
	}}}
}

// organize hides columns and renames the rest of a table.
func organize(exclude []string, rename map[string]string) dashboard.DataTransformerConfig {
	ex := map[string]bool{}
	for _, c := range exclude {
		ex[c] = true
	}
	return dashboard.DataTransformerConfig{
		Id:      "organize",
		Options: map[string]any{"excludeByName": ex, "renameByName": rename},
	}
}

// merge joins the instant tables of several queries on their labels.
func merge() dashboard.DataTransformerConfig {
	return dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}
}

func colorBackground() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}}
}

// newTable is a table panel whose footer passes strict decoding: the SDK's
// default footer has a null reducer, which its own strict decoder rejects.
func newTable() *table.PanelBuilder {
	return table.NewPanelBuilder().
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}))
}

// serverLink makes a table's Server column open this dashboard on that
// server: its row ("Server $server") shows it, with the time range, data
// source, jobs and instances kept.
func serverLink() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{
		"title": "Open the row of ${__value.raw}",
		"url": "/d/${__dashboard.uid}?${__url_time_range}&${datasource:queryparam}&${job:queryparam}&${instance:queryparam}" +
			"&var-server=${__value.raw:percentencode}",
	}}}}
}
