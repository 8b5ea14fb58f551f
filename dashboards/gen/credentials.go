package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// credentials is the first row: what a person opening the dashboard during
// a credential page needs in one look. Which credential of which server is
// empty, rejected (with the server's own words), about to expire, or whose
// server cannot reach its own upstream; each server name opens its row.
func credentials() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		newTable().
			Title("Credentials missing").
			Description("Credentials that expanded to an empty value at the last probe on every replica (an unset CI secret, an emptied token file): the server is not probed until it has one. Pages (McpCredentialMissing). Last success is how long ago a probe of the server last passed, on any replica.").
			Datasource(datasource()).Unit("s").
			Height(7).Span(12).
			NoValue("Every credential has a value").
			WithTarget(instant(sinceLastSuccess(`min by (server, credential) (mcpwatch_credential_present{`+fleet+`}) == 0`), true)).
			WithTransformation(organize(
				[]string{"Time"},
				map[string]string{"server": "Server", "credential": "Credential", "Value": "Last success"})).
			OverrideByName("Server", serverLink()).
			OverrideByName("Last success", sinceColumn()),
		newTable().
			Title("Credentials rejected").
			Description("Credentials the server rejected at the last probe or canary call on any replica (HTTP 401/403, or its words: Bad credentials, invalid_auth, ...), with what it said, scrubbed of secrets and cut to 200 bytes. Pages (McpCredentialRejected): renew the credential named.").
			Datasource(datasource()).Unit("s").
			Height(7).Span(12).
			NoValue("No credential is rejected").
			WithTarget(instant(sinceLastSuccess(`max by (server, credential, message) (mcpwatch_credential_rejected_info{`+fleet+`}) == 1`), true)).
			WithTransformation(organize(
				[]string{"Time"},
				map[string]string{"server": "Server", "credential": "Credential", "message": "Server said", "Value": "Last success"})).
			OverrideByName("Server", serverLink()).
			OverrideByName("Last success", sinceColumn()),
		newTable().
			Title("Credentials expiring within 7 days").
			Description("Credentials mcpwatch sends that expire within a week, or have expired, soonest first: JWT headers and env values (their exp) and OAuth refresh tokens whose lifetime is known. OAuth access tokens are left out: mcpwatch renews them. Under a week opens a ticket, under a day pages (McpCredentialExpiringSoon); the status page shows every expiry.").
			Datasource(datasource()).Unit("s").
			Height(7).Span(12).
			NoValue("No credential expires within 7 days").
			WithTarget(instant(`sort(min by (server, credential) (mcpwatch_credential_expiry_timestamp_seconds{`+fleet+`,credential!="oauth_access_token"}) - time() < 7 * 86400)`, true)).
			WithTransformation(organize(
				[]string{"Time"},
				map[string]string{"server": "Server", "credential": "Credential", "Value": "Expires in"})).
			OverrideByName("Server", serverLink()).
			OverrideByName("Expires in", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "thresholds", Value: map[string]any{
					"mode": "absolute", "steps": []map[string]any{{"color": "red", "value": nil}, {"color": "orange", "value": 86400}, {"color": "green", "value": 7 * 86400}}}})),
		newTable().
			Title("Upstreams unreachable").
			Description("Servers whose last probe or canary call, on any replica, said the service behind them is unreachable (the MCP server answers, its upstream does not), with what it said. Pages (McpUpstreamUnreachable): the fault is past the MCP server, not in its credential or tools.").
			Datasource(datasource()).Unit("s").
			Height(7).Span(12).
			NoValue("Every upstream answered").
			WithTarget(instant(sinceLastSuccess(`max by (server, credential, message) (mcpwatch_upstream_unreachable_info{`+fleet+`}) == 1`), true)).
			WithTransformation(organize(
				[]string{"Time"},
				map[string]string{"server": "Server", "credential": "Credential", "message": "Server said", "Value": "Last success"})).
			OverrideByName("Server", serverLink()).
			OverrideByName("Last success", sinceColumn()),
		timeseries.NewPanelBuilder().
			Title("OAuth token request failures").
			Description("Failed OAuth token requests per second by server and reason (invalid_grant: the refresh token is expired or revoked; see the runbook of McpCredentialRefreshFailing).").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(7).Span(12).
			WithTarget(series(`sum by (server, reason) (rate(mcpwatch_credential_refresh_failures_total{`+fleet+`}[$__rate_interval])) > 0`,
				"{{server}}: {{reason}}")),
		newTable().
			Title("OAuth clients").
			Description("Per server with auth: oauth, how long ago its OAuth client last got an access token (on any replica) and its failed token requests since each replica started (OAuth token request failures has them by reason over time). A token older than its lifetime with failures growing is what McpCredentialRefreshFailing pages about.").
			Datasource(datasource()).Unit("s").
			Height(7).Span(12).
			NoValue("No server uses auth: oauth").
			WithTarget(instant(`time() - max by (server) (mcpwatch_credential_last_refresh_success_timestamp_seconds{`+fleet+`})`, true).RefId("token")).
			WithTarget(instant(`sum by (server) (mcpwatch_credential_refresh_failures_total{`+fleet+`})`, true).RefId("failures")).
			WithTransformation(merge()).
			WithTransformation(organize(
				[]string{"Time"},
				map[string]string{"server": "Server", "Value #token": "Last token got", "Value #failures": "Failed requests"})).
			OverrideByName("Server", serverLink()).
			OverrideByName("Failed requests", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "unit", Value: "short"},
				dashboard.DynamicConfigValue{Id: "decimals", Value: 0},
				dashboard.DynamicConfigValue{Id: "thresholds", Value: map[string]any{
					"mode": "absolute", "steps": []map[string]any{{"color": "green", "value": nil}, {"color": "red", "value": 1}}}})),
	}
}

// sinceLastSuccess gives each row of problem (an expression whose series
// carry a server label) the seconds since its server's last successful
// probe on any replica, or -1 when none has passed since mcpwatch began
// watching it: when the credential died, as near as the series tell.
func sinceLastSuccess(problem string) string {
	last := `max by (server) (mcpwatch_last_success_timestamp_seconds{` + fleet + `})`
	return `(time() - ` + last + `) * on (server) group_right () (0 * (` + problem + `) + 1)` +
		` or 0 * (` + problem + `) - 1`
}

// sinceColumn shows sinceLastSuccess's seconds as a duration, and its -1 as
// words.
func sinceColumn() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		{Id: "unit", Value: "s"},
		{Id: "mappings", Value: []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
			Type: dashboard.MappingTypeValueToText,
			Options: map[string]dashboard.ValueMappingResult{
				"-1": {Text: cog.ToPtr("none seen"), Index: cog.ToPtr[int32](0)},
			},
		}}}},
	}
}
