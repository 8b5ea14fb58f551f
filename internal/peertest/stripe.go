package peertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stripeOrigin is where @stripe/mcp 0.3.x relays: it is a stdio front of
// Stripe's remote MCP server (https://docs.stripe.com/mcp), to which it
// sends every message with the key as a bearer token, through the MCP
// SDK's streamable HTTP client and so the global fetch.
const stripeOrigin = "https://mcp.stripe.com"

// NewStripe starts a stand-in of Stripe's remote MCP server that takes API
// keys (sk_ and rk_). As Stripe's API does, a key it does not take gets 401
// with an invalid_request_error naming the key masked
// (https://docs.stripe.com/error-handling, https://docs.stripe.com/keys);
// the relay then never answers initialize and logs that body to stderr.
// A good key gets an MCP server whose tools read canned account data; its
// one write tool changes nothing and is counted as a write.
func NewStripe(keys ...string) *API {
	var a *API
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stripeServer() },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	a = newAPI("Stripe", stripeOrigin, bearer, func(w http.ResponseWriter, r *http.Request, v verdict) {
		switch v {
		case credValid:
			mcpHandler.ServeHTTP(w, r)
		case credNone:
			writeJSON(w, http.StatusUnauthorized, stripeError("You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."))
		default:
			writeJSON(w, http.StatusUnauthorized, stripeError("Invalid API Key provided: "+maskStripeKey(bearer(r))))
		}
	}, keys)
	// Every MCP message is a POST; only a call of the write tool writes.
	a.writes = func(r *http.Request) bool {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		return err == nil && json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "stripe_api_write"
	}
	return a
}

// stripeError is the body of Stripe's API errors.
func stripeError(message string) map[string]any {
	return map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error"}}
}

// maskStripeKey shows a key as Stripe's errors do: its prefix and last
// four characters.
func maskStripeKey(key string) string {
	prefix := ""
	for _, p := range []string{"sk_test_", "sk_live_", "rk_test_", "rk_live_"} {
		if strings.HasPrefix(key, p) {
			prefix = p
		}
	}
	rest := strings.TrimPrefix(key, prefix)
	if len(rest) <= 4 {
		return prefix + strings.Repeat("*", len(rest))
	}
	return prefix + strings.Repeat("*", len(rest)-4) + rest[len(rest)-4:]
}

// stripeServer is the MCP server behind a good key: a few of the tools
// Stripe's remote server lists, annotated as Stripe annotates them.
func stripeServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stripe", Version: "1.0.0"}, nil)
	noInput := json.RawMessage(`{"type":"object","properties":{}}`)
	read := func(name, description string, schema json.RawMessage, answer any) {
		s.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				raw, err := json.Marshal(answer)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}, nil
			})
	}
	read("get_stripe_account_info", "Retrieve information about the Stripe account in use.", noInput,
		map[string]any{"account_id": "acct_1AbCdEfGhIjKlMnO", "display_name": "Acme", "country": "US", "default_currency": "usd"})
	read("search_stripe_documentation", "Search the Stripe documentation and support articles.",
		json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"The question to search for"}},"required":["question"]}`),
		map[string]any{"results": []any{map[string]any{"title": "API keys", "url": "https://docs.stripe.com/keys"}}})
	read("stripe_api_search", "Search for Stripe API methods by keyword.",
		json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		map[string]any{"methods": []any{"GetBalance", "ListCustomers"}})
	read("stripe_api_read", "Read data with any Stripe API GET method.",
		json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},"params":{"type":"object"}},"required":["method"]}`),
		map[string]any{"object": "balance", "available": []any{map[string]any{"amount": 0, "currency": "usd"}}, "livemode": false})
	destructive := true
	s.AddTool(&mcp.Tool{
		Name: "stripe_api_write", Description: "Write data with any Stripe API POST, PATCH, PUT and DELETE method.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},"params":{"type":"object"}},"required":["method"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "a stand-in writes nothing"}}}, nil
	})
	return s
}
