package probetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// ErrExitAtOnce is what ServeStdio returns for ExitAtOnce, after writing the
// fatal line: the process should exit with status 1.
var ErrExitAtOnce = errors.New("probetest: exit at once (ExitAtOnce behavior)")

// maxInLine bounds one message from the client; a prober's messages are
// small, so anything longer is a broken client.
const maxInLine = 4 << 20

// ServeStdio serves one client over stdio: newline-delimited JSON-RPC read
// from in and written to out, with a line "probetest: recv <method>" on
// errOut for each message received, so a test can tell from the stderr tail
// what a client sent. Credentials come from the process environment
// (Config.TokenEnv, REPORT_SCOPE).
//
// It returns nil when in ends, ctx's error when ctx ends first (a goroutine
// then stays blocked reading in until in is closed), ErrExitAtOnce for
// ExitAtOnce, and an error for a behavior that exists over HTTP only.
//
// Unresponsive makes the whole process ignore SIGTERM and spawns a
// grandchild: use it only in a child process (see RunIfChild).
func ServeStdio(ctx context.Context, cfg Config, in io.Reader, out, errOut io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	if cfg.Behavior.httpOnly() {
		return fmt.Errorf("probetest: behavior %q exists over HTTP only: serve it with Handler", cfg.Behavior)
	}
	if cfg.SpawnLog != "" {
		if err := appendLine(cfg.SpawnLog, strconv.Itoa(os.Getpid())); err != nil {
			return err
		}
	}
	if cfg.StartDelayMS > 0 {
		select {
		case <-time.After(time.Duration(cfg.StartDelayMS) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var usr1 chan os.Signal
	if cfg.StateFile != "" {
		state := readState(cfg.StateFile)
		if slices.Contains(state, StateExitAtStart) {
			fmt.Fprintln(errOut, StateRevokedLine)
			return ErrExitAtOnce
		}
		for _, l := range state {
			if text, ok := strings.CutPrefix(l, StateLogAtStart); ok {
				fmt.Fprintln(errOut, text)
			}
		}
		if cfg.PIDFile != "" {
			if err := spawnGrandchild(cfg.PIDFile); err != nil {
				return err
			}
		}
		usr1 = make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		defer signal.Stop(usr1)
	}
	if cfg.StartStderr != "" {
		if _, err := io.WriteString(errOut, cfg.StartStderr); err != nil {
			return fmt.Errorf("probetest: write to stderr: %w", err)
		}
	}
	switch cfg.Behavior {
	case ExitAtOnce:
		fmt.Fprintf(errOut, "fatal: %s is not set\n", cfg.TokenEnv)
		return ErrExitAtOnce
	case Unresponsive:
		return serveUnresponsive(ctx, cfg, in, errOut)
	case Banner:
		if _, err := io.WriteString(out, "report-server 1.0.0 ready, listening on stdio\n"); err != nil {
			return fmt.Errorf("probetest: write banner to stdout: %w", err)
		}
	}
	s := &stdioServer{
		core:   newCore(cfg),
		out:    out,
		errOut: errOut,
		creds:  stdioCreds(cfg),
		items:  make(chan stdinItem),
		usr1:   usr1,
	}
	if cfg.Behavior == SlowBody {
		s.out = &dripWriter{ctx: ctx, w: out, flush: func() {}}
	}
	return s.run(ctx, in)
}

// stdioCreds reads the credentials a stdio server is started with.
func stdioCreds(cfg Config) creds {
	return creds{
		token:    tokenMatches(cfg.Token, os.Getenv(cfg.TokenEnv)),
		readOnly: os.Getenv(ScopeEnv) == "read",
	}
}

// stdinItem is one line read from stdin: a message or why it is not one.
type stdinItem struct {
	msg  *inMessage
	perr *rpcError
}

type stdioServer struct {
	core   *core
	out    io.Writer
	errOut io.Writer
	creds  creds
	sess   session

	usr1     chan os.Signal // SIGUSR1 (a StateFile server): announce a change of the tools
	items    chan stdinItem // from the reader goroutine; closed at the end of in
	readErr  error          // why in ended; read only after items is closed
	backlog  []stdinItem    // read while waiting for a reply to our own request
	nextPing int
	asked    bool // a request has been received
}

// ErrUnknownFirst is what ServeStdio returns for ExitOnUnknownFirst when
// the first request was not initialize: the process should exit with
// status 1.
var ErrUnknownFirst = errors.New("probetest: the first request was not initialize (ExitOnUnknownFirst behavior)")

// appendLine appends one line to a file, creating it.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600) //nolint:gosec // G304: the spawn log a test named in the kit's configuration
	if err != nil {
		return fmt.Errorf("probetest: spawn log: %w", err)
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("probetest: spawn log: %w", err)
	}
	return nil
}

func (s *stdioServer) run(ctx context.Context, in io.Reader) error {
	done := make(chan struct{})
	defer close(done)
	go s.read(in, done)
	for {
		item, err := s.next(ctx)
		if err != nil {
			return err
		}
		if item == nil {
			return s.readErr
		}
		if err := s.dispatch(ctx, *item); err != nil {
			return err
		}
	}
}

// read turns lines of in into items until in ends or run returns.
func (s *stdioServer) read(in io.Reader, done <-chan struct{}) {
	defer close(s.items)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxInLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg, perr := parseMessage(line)
		select {
		case s.items <- stdinItem{msg: msg, perr: perr}:
		case <-done:
			return
		}
	}
	if err := sc.Err(); err != nil {
		s.readErr = fmt.Errorf("probetest: read stdin: %w", err)
	}
}

// next returns the next item, or nil at the end of in.
func (s *stdioServer) next(ctx context.Context) (*stdinItem, error) {
	if len(s.backlog) > 0 {
		item := s.backlog[0]
		s.backlog = s.backlog[1:]
		return &item, nil
	}
	for {
		select {
		case item, ok := <-s.items:
			if !ok {
				return nil, nil
			}
			return &item, nil
		case <-s.usr1:
			if err := s.notify(ctx, "notifications/tools/list_changed"); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *stdioServer) dispatch(ctx context.Context, item stdinItem) error {
	if item.perr != nil {
		fmt.Fprintf(s.errOut, "probetest: recv invalid message: %s\n", item.perr.Message)
		return s.write(reply{msg: errorMessage(nil, item.perr)})
	}
	m := item.msg
	switch {
	case m.isResponse():
		fmt.Fprintf(s.errOut, "probetest: recv unexpected response %s\n", sanitize.Truncate(string(m.ID), 60))
		return nil
	case m.isNotification():
		fmt.Fprintf(s.errOut, "probetest: recv %s\n", sanitize.Truncate(m.Method, 100))
		s.core.notification(ctx, &s.sess, m, s)
		return nil
	default:
		fmt.Fprintf(s.errOut, "probetest: recv %s\n", sanitize.Truncate(m.Method, 100))
		first := !s.asked
		s.asked = true
		if first && m.Method != "initialize" && s.core.cfg.Behavior == ExitOnUnknownFirst {
			fmt.Fprintf(s.errOut, "fatal: expected initialize as the first request, got %s\n", sanitize.Truncate(m.Method, 100))
			return ErrUnknownFirst
		}
		rep := s.core.handle(ctx, &s.sess, m, s.creds, s.core.modern(m, ""), s)
		if rep.msg == nil {
			return nil // never answered
		}
		return s.write(rep)
	}
}

// write sends one message as one line.
func (s *stdioServer) write(rep reply) error {
	var err error
	if rep.huge {
		_, err = io.Copy(s.out, io.MultiReader(hugeLine(rep.msg.ID), bytes.NewReader([]byte("\n"))))
	} else {
		_, err = s.out.Write(append(rep.msg.encode(), '\n'))
	}
	if err != nil {
		return fmt.Errorf("probetest: write stdout: %w", err)
	}
	return nil
}

// notify implements peer.
func (s *stdioServer) notify(ctx context.Context, method string) error {
	return s.write(reply{msg: notificationMessage(method)})
}

// ask implements peer: it sends a request and reads on until its reply,
// keeping whatever else arrives for later.
func (s *stdioServer) ask(ctx context.Context, method string) (*inMessage, error) {
	s.nextPing++
	id := "probetest-" + method + "-" + strconv.Itoa(s.nextPing)
	if err := s.write(reply{msg: requestMessage(id, method)}); err != nil {
		return nil, err
	}
	for {
		select {
		case item, ok := <-s.items:
			if !ok {
				return nil, errClientGone
			}
			if item.msg != nil && item.msg.isResponse() && idEquals(item.msg.ID, id) {
				fmt.Fprintf(s.errOut, "probetest: recv response to %s\n", method)
				return item.msg, nil
			}
			s.backlog = append(s.backlog, item)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// idEquals reports whether a raw JSON id is the string id.
func idEquals(raw json.RawMessage, id string) bool {
	var got string
	return json.Unmarshal(raw, &got) == nil && got == id
}
