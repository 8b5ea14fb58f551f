#!/bin/sh
# The MCP conformance suite's client under test: mcpwatch, as an operator
# runs it. The suite (npx @modelcontextprotocol/conformance client
# --command THIS --scenario NAME) appends the scenario's server URL, and
# sets MCP_CONFORMANCE_SCENARIO and, for a scenario with credentials,
# MCP_CONFORMANCE_CONTEXT (JSON). scripts/conformance.sh runs every
# scenario through it.
#
# A scenario that needs a person's consent gets 'mcpwatch login' first,
# its browser a curl that follows the authorization URL's redirects (the
# suite's authorization server consents at once); then 'mcpwatch probe'
# with what login stored, and 'probe --call' where the scenario checks a
# tool call. MCPWATCH is the binary (default ./bin/mcpwatch).
set -eu
url=$(eval echo "\${$#}")
bin=${MCPWATCH:-./bin/mcpwatch}
scenario=${MCP_CONFORMANCE_SCENARIO:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ctx() { # ctx KEY: a string member of MCP_CONFORMANCE_CONTEXT
	printf '%s' "${MCP_CONFORMANCE_CONTEXT:-{\}}" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];process.stdout.write(v==null?"":String(v))})' "$1"
}

cat >"$work/browser" <<'B'
#!/bin/sh
exec curl -sS -L -o /dev/null --max-time 20 "$1"
B
chmod +x "$work/browser"

rt="\${file:$work/token}"
case "$scenario" in
initialize)
	exec "$bin" probe --timeout 20s --url "$url" ;;
tools_call)
	exec "$bin" probe --timeout 20s --url "$url" --call add_numbers --input '{"a": 2, "b": 3}' --allow-side-effects --allow-destructive ;;
sse-retry)
	exec "$bin" probe --timeout 20s --url "$url" --call test_reconnection --allow-side-effects --allow-destructive ;;
elicitation-sep1034-client-defaults)
	exec "$bin" probe --timeout 20s --url "$url" --call test_client_elicitation_defaults --allow-side-effects --allow-destructive ;;
auth/client-credentials-basic)
	export CONFORMANCE_SECRET="$(ctx client_secret)"
	exec "$bin" probe --timeout 20s --url "$url" --oauth-grant client_credentials \
		--oauth-client-id "$(ctx client_id)" --oauth-client-secret '${CONFORMANCE_SECRET}' ;;
auth/client-credentials-jwt)
	ctx private_key_pem >"$work/key.pem"
	exec "$bin" probe --timeout 20s --url "$url" --oauth-grant client_credentials \
		--oauth-client-id "$(ctx client_id)" --oauth-private-key-file "$work/key.pem" ;;
auth/*)
	set -- --oauth-refresh-token "$rt"
	case "$scenario" in
	auth/basic-cimd) # the document the suite's authorization server knows
		login_flags="--client-metadata-url https://conformance-test.local/client-metadata.json" ;;
	*) login_flags= ;;
	esac
	if [ -n "$(ctx client_id)" ]; then # pre-registration: a client the server knows
		export CONFORMANCE_SECRET="$(ctx client_secret)"
		set -- "$@" --oauth-client-id "$(ctx client_id)" --oauth-client-secret '${CONFORMANCE_SECRET}'
	fi
	# shellcheck disable=SC2086
	BROWSER="$work/browser" "$bin" login --timeout 20s --url "$url" $login_flags "$@"
	if [ "$scenario" = auth/scope-step-up ]; then
		# The suite's tool needs more scope than listing. Its token
		# comes without a refresh token, so the call's step-up is a
		# person's: the probe names the scope, and login is run again
		# with it, as its message says.
		call="--call test-tool --allow-side-effects --allow-destructive"
		# shellcheck disable=SC2086
		"$bin" probe --timeout 20s --url "$url" "$@" $call >"$work/out" 2>&1 && { cat "$work/out"; exit 0; }
		cat "$work/out"
		scopes=$(sed -n 's/.*set auth\.scopes to "\([^"]*\)".*/\1/p' "$work/out" | head -n 1 | tr ' ' ',')
		[ -n "$scopes" ] || exit 1
		BROWSER="$work/browser" "$bin" login --timeout 20s --url "$url" "$@" --oauth-scopes "$scopes"
		# shellcheck disable=SC2086
		exec "$bin" probe --timeout 20s --url "$url" "$@" --oauth-scopes "$scopes" $call
	fi
	exec "$bin" probe --timeout 20s --url "$url" "$@" ;;
*)
	exec "$bin" probe --timeout 20s --url "$url" ;;
esac
