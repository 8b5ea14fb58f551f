package probetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// core is the MCP message handler, written once for every front end (stdio,
// streamable HTTP, legacy HTTP+SSE). A front end parses messages, decides
// the era of each request and the client's credentials, and writes the
// replies core returns; core decides what to answer and how to misbehave.
type core struct {
	cfg       Config
	manyTools []Tool      // ManyTools and HugePages: generated once
	hugeSent  atomic.Bool // HugeLine: only the first request gets the huge line
}

func newCore(cfg Config) *core {
	c := &core{cfg: cfg.withDefaults()}
	if c.cfg.Behavior == ManyTools {
		c.manyTools = make([]Tool, ManyToolsCount)
		for i := range c.manyTools {
			c.manyTools[i] = Tool{
				Name:        fmt.Sprintf("tool_%04d", i),
				Description: fmt.Sprintf("Generated tool number %d", i),
				InputSchema: map[string]any{"type": "object"},
			}
		}
	}
	if c.cfg.Behavior == HugePages {
		size := c.cfg.DescriptionBytes
		if size <= 0 {
			size = HugePageDescriptionBytes
		}
		desc := strings.Repeat("d", size) // one string, shared by every tool
		c.manyTools = make([]Tool, HugePagesCount)
		for i := range c.manyTools {
			c.manyTools[i] = Tool{Name: fmt.Sprintf("huge_%02d", i), Description: desc, InputSchema: map[string]any{"type": "object"}}
		}
	}
	return c
}

// peer is how core reaches the client besides the reply: a notification
// ahead of the reply, or a request of its own whose answer it waits for.
type peer interface {
	notify(ctx context.Context, method string) error
	ask(ctx context.Context, method string) (*inMessage, error)
}

// reply is core's answer to one request.
type reply struct {
	msg    *outMessage // nil: the request is never answered
	status int         // HTTP status of the reply; 0 means 200
	huge   bool        // send hugeLine(msg.ID) instead of msg
}

func (r reply) httpStatus() int {
	if r.status == 0 {
		return 200
	}
	return r.status
}

// session is what one client connection has established: a stdio process,
// a legacy HTTP session, a legacy SSE stream, or one stateless modern
// request.
type session struct {
	mu              sync.Mutex
	initialized     bool
	version         string
	listChangedSent bool
}

// takeListChanged reports whether the list_changed notification is still
// to be sent in this session, and marks it sent.
func (s *session) takeListChanged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listChangedSent {
		return false
	}
	s.listChangedSent = true
	return true
}

// creds is what the client proved about itself on this request.
type creds struct {
	token    bool // the expected credential was presented
	readOnly bool // Scoped: the client has read scope only
}

// tokenMatches compares a presented credential with the expected one. An
// empty expectation accepts any non-empty credential, like the Python report server's
// report server.
func tokenMatches(want, got string) bool {
	if want == "" {
		return got != ""
	}
	return got == want
}

// modern reports whether req is answered in the modern era. headerVersion
// is the MCP-Protocol-Version header over HTTP, "" on stdio.
func (c *core) modern(req *inMessage, headerVersion string) bool {
	switch c.cfg.Era {
	case EraModern:
		return true
	case EraDual:
		if req.Method == "initialize" {
			return false
		}
		return req.Method == "server/discover" || req.metaVersion() != "" || headerVersion >= VersionModern
	default:
		return false
	}
}

// supportedVersions is what a modern answer advertises.
func (c *core) supportedVersions() []string {
	if c.cfg.Era == EraDual {
		return append([]string{VersionModern}, LegacyVersions()...)
	}
	return []string{VersionModern}
}

// handle answers one request.
func (c *core) handle(ctx context.Context, sess *session, req *inMessage, cr creds, modern bool, p peer) reply {
	if c.cfg.Behavior == Unresponsive {
		return reply{}
	}
	if c.cfg.Behavior == HugeLine && c.hugeSent.CompareAndSwap(false, true) {
		return reply{msg: resultMessage(req.ID, nil), huge: true}
	}
	if modern {
		return c.handleModern(ctx, sess, req, cr, p)
	}
	return c.handleLegacy(ctx, sess, req, cr, p)
}

// notification takes a notification from the client. p is nil where the
// transport cannot send anything back (a notification POST gets 202).
func (c *core) notification(ctx context.Context, sess *session, req *inMessage, p peer) {
	if req.Method == "notifications/initialized" && c.cfg.Behavior == ListChanged && p != nil && sess.takeListChanged() {
		_ = p.notify(ctx, "notifications/tools/list_changed")
	}
}

func (c *core) handleLegacy(ctx context.Context, sess *session, req *inMessage, cr creds, p peer) reply {
	switch req.Method {
	case "initialize":
		requested, _ := req.params()["protocolVersion"].(string)
		version := VersionLatest
		if slices.Contains(LegacyVersions(), requested) {
			version = requested
		}
		sess.mu.Lock()
		sess.initialized, sess.version = true, version
		sess.mu.Unlock()
		return reply{msg: resultMessage(req.ID, map[string]any{
			"protocolVersion": version,
			"capabilities":    c.capabilities(),
			"serverInfo":      c.serverInfo(),
		})}
	case "ping":
		return reply{msg: resultMessage(req.ID, map[string]any{})}
	case "tools/list":
		return c.listTools(ctx, sess, req, cr, false, p)
	case "tools/call":
		return c.callTool(req, cr, false)
	default:
		if c.cfg.Behavior == SilentOnUnknown {
			return reply{} // never answered
		}
		return reply{msg: errorMessage(req.ID, &rpcError{Code: codeMethodNotFound, Message: "Method not found"})}
	}
}

func (c *core) handleModern(ctx context.Context, sess *session, req *inMessage, cr creds, p peer) reply {
	if req.Method == "initialize" {
		requested, _ := req.params()["protocolVersion"].(string)
		return reply{status: 400, msg: errorMessage(req.ID, &rpcError{
			Code:    codeInvalidParams,
			Message: "initialize is not supported: this server speaks " + VersionModern + " without a handshake; use server/discover",
			Data:    map[string]any{"supported": c.supportedVersions(), "requested": requested},
		})}
	}
	meta := req.meta()
	version, _ := meta[metaProtocolVersion].(string)
	if version == "" {
		return reply{status: 400, msg: errorMessage(req.ID, &rpcError{
			Code: codeInvalidParams, Message: fmt.Sprintf("missing _meta %q", metaProtocolVersion)})}
	}
	if version != VersionModern {
		return reply{status: 400, msg: errorMessage(req.ID, &rpcError{
			Code:    codeUnsupportedVersion,
			Message: "Unsupported protocol version",
			Data:    map[string]any{"supported": c.supportedVersions(), "requested": version},
		})}
	}
	if _, ok := meta[metaClientCapabilities].(map[string]any); !ok {
		return reply{status: 400, msg: errorMessage(req.ID, &rpcError{
			Code: codeInvalidParams, Message: fmt.Sprintf("missing _meta %q", metaClientCapabilities)})}
	}
	switch req.Method {
	case "server/discover":
		result := map[string]any{
			"supportedVersions": c.supportedVersions(),
			"capabilities":      c.capabilities(),
		}
		c.addModernFields(result, true)
		return reply{msg: resultMessage(req.ID, result)}
	case "tools/list":
		return c.listTools(ctx, sess, req, cr, true, p)
	case "tools/call":
		return c.callTool(req, cr, true)
	default:
		return reply{status: 404, msg: errorMessage(req.ID, &rpcError{
			Code: codeMethodNotFound, Message: "Method not found: " + sanitize.Truncate(req.Method, 100)})}
	}
}

func (c *core) capabilities() map[string]any {
	return map[string]any{"tools": map[string]any{"listChanged": c.cfg.Behavior == ListChanged}}
}

func (c *core) serverInfo() map[string]any {
	return map[string]any{"name": c.cfg.ServerName, "version": "1.0.0"}
}

// addModernFields adds what every modern result carries, and the cache
// fields of cacheable ones. A tool list that depends on credentials is
// private.
func (c *core) addModernFields(result map[string]any, cacheable bool) {
	result["resultType"] = "complete"
	result["_meta"] = map[string]any{metaServerInfo: c.serverInfo()}
	if cacheable {
		result["ttlMs"] = 60000
		scope := "public"
		if c.cfg.Behavior == TokenGated || c.cfg.Behavior == Scoped || c.cfg.Behavior == Unauthorized401 {
			scope = "private"
		}
		result["cacheScope"] = scope
	}
}

// toolsFor is the tool set a client with these credentials sees.
func (c *core) toolsFor(cr creds) []Tool {
	switch c.cfg.Behavior {
	case ManyTools, HugePages:
		return c.manyTools
	case TokenGated:
		if !cr.token {
			return []Tool{}
		}
	case Scoped:
		if cr.readOnly {
			return slices.DeleteFunc(slices.Clone(c.cfg.Tools), func(t Tool) bool {
				return !strings.HasPrefix(t.Name, "list_")
			})
		}
	}
	if state := readState(c.cfg.StateFile); len(state) > 0 {
		return slices.DeleteFunc(slices.Clone(c.cfg.Tools), func(t Tool) bool {
			return slices.Contains(state, StateRemove+t.Name)
		})
	}
	return c.cfg.Tools
}

// readState reads the lines of a StateFile; none when it is unset or
// cannot be read.
func readState(path string) []string {
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the state file a test named in the kit's configuration
	if err != nil {
		return nil
	}
	var lines []string
	for l := range strings.Lines(string(raw)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// page cuts one page out of tools. Only ManyTools, HugePages and StuckCursor paginate;
// an empty cursor means the first page everywhere.
func (c *core) page(tools []Tool, cursor string) (page []Tool, next *string, ok bool) {
	switch c.cfg.Behavior {
	case StuckCursor:
		stuck := StuckCursorValue
		return tools, &stuck, true
	case ManyTools, HugePages:
		size := ManyToolsPageSize
		if c.cfg.Behavior == HugePages {
			size = 1
		}
		start := 0
		if cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(cursor, "offset-"))
			if err != nil || !strings.HasPrefix(cursor, "offset-") || n <= 0 || n >= len(tools) || n%size != 0 {
				return nil, nil, false
			}
			start = n
		}
		end := min(start+size, len(tools))
		if end < len(tools) {
			s := "offset-" + strconv.Itoa(end)
			next = &s
		}
		return tools[start:end], next, true
	default:
		return tools, nil, cursor == ""
	}
}

func (c *core) listTools(ctx context.Context, sess *session, req *inMessage, cr creds, modern bool, p peer) reply {
	if c.cfg.Behavior == StallToolsList || slices.Contains(readState(c.cfg.StateFile), StateHang) {
		return reply{}
	}
	params := req.params()
	cursor, isString := params["cursor"].(string)
	if _, present := params["cursor"]; present && !isString {
		return reply{msg: errorMessage(req.ID, &rpcError{Code: codeInvalidParams, Message: "cursor must be a string"})}
	}
	page, next, ok := c.page(c.toolsFor(cr), cursor)
	if !ok {
		return reply{msg: errorMessage(req.ID, &rpcError{Code: codeInvalidParams, Message: "Invalid cursor"})}
	}
	if c.cfg.Behavior == ListChanged && sess.takeListChanged() {
		if err := p.notify(ctx, "notifications/tools/list_changed"); err != nil {
			return reply{}
		}
	}
	if c.cfg.Behavior == PingFirst {
		answer, err := p.ask(ctx, "ping")
		if err != nil {
			return reply{} // the client is gone: nobody to answer
		}
		if answer.Error != nil || len(answer.Result) == 0 {
			return reply{msg: errorMessage(req.ID, &rpcError{
				Code: codeInternalError, Message: "the client did not answer ping with a result; a client must answer ping with {}"})}
		}
	}
	result := map[string]any{"tools": page}
	if next != nil {
		result["nextCursor"] = *next
	}
	if modern {
		c.addModernFields(result, true)
	}
	id := req.ID
	if c.cfg.Behavior == WrongID {
		id = json.RawMessage(strconv.Quote("wrong-" + string(req.ID)))
	}
	msg := resultMessage(id, result)
	if c.cfg.Behavior == DuplicateResult {
		msg.Shadow = map[string]any{"tools": []Tool{{Name: ShadowToolName, InputSchema: map[string]any{"type": "object"}}}}
	}
	return reply{msg: msg}
}

func (c *core) callTool(req *inMessage, cr creds, modern bool) reply {
	params := req.params()
	name, _ := params["name"].(string)
	args, _ := params["arguments"].(map[string]any)
	if !slices.ContainsFunc(c.toolsFor(cr), func(t Tool) bool { return t.Name == name }) {
		return reply{msg: errorMessage(req.ID, &rpcError{Code: codeInvalidParams, Message: "Unknown tool: " + sanitize.Truncate(name, 100)})}
	}
	switch c.cfg.Behavior {
	case CallRPCError:
		return reply{msg: errorMessage(req.ID, &rpcError{Code: codeInternalError, Message: CallFailureText})}
	}
	text, isError := toolOutput(name, args)
	switch c.cfg.Behavior {
	case CallIsError:
		text, isError = CallFailureText, true
	case CallErrorText:
		text, isError = CallErrorTextBody, false
	}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		result["isError"] = true
	}
	if modern {
		c.addModernFields(result, false)
	}
	return reply{msg: resultMessage(req.ID, result)}
}

// toolOutput is what a tool call returns: a small fake report.
func toolOutput(name string, args map[string]any) (text string, isError bool) {
	switch name {
	case "fetch_daily_report":
		date, _ := args["date"].(string)
		if date == "" {
			return "argument date is required (YYYY-MM-DD)", true
		}
		return fmt.Sprintf("Daily sales report for %s: 42 orders, 1234.50 EUR", sanitize.Truncate(date, 20)), false
	case "list_report_dates":
		return "2026-08-01\n2026-08-02\n2026-08-03", false
	case "echo":
		msg, _ := args["message"].(string)
		return "Echo: " + msg, false
	default:
		return "ok: " + name, false
	}
}
