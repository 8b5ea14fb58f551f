package peertest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
)

// Postgres is a stand-in of a PostgreSQL 15 server on loopback: it speaks
// enough of the wire protocol (version 3) for server-postgres's client
// (node-postgres) to log in with a password and run simple queries. A wrong
// or revoked password gets the error PostgreSQL sends (SQLSTATE 28P01,
// "password authentication failed for user ..."); each query is answered
// with one row holding "1". It never writes anything.
type Postgres struct {
	ln net.Listener
	wg sync.WaitGroup

	mu        sync.Mutex
	passwords map[string]string // user -> good password
	conns     map[net.Conn]bool
	logins    int
	queries   []string
	closed    bool
}

// NewPostgres starts a stand-in that takes user with password.
func NewPostgres(user, password string) (*Postgres, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("postgres stand-in: %w", err)
	}
	p := &Postgres{ln: ln, passwords: map[string]string{user: password}, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// URL is a database URL for user and password at the stand-in, as
// server-postgres takes it as its argument.
func (p *Postgres) URL(user, password string) string {
	u := url.URL{Scheme: "postgresql", User: url.UserPassword(user, password), Host: p.ln.Addr().String(), Path: "/app"}
	return u.String()
}

// SetPassword changes user's good password (the old one is then rejected).
func (p *Postgres) SetPassword(user, password string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.passwords[user] = password
}

// Queries are the statements run so far, in order.
func (p *Postgres) Queries() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.queries...)
}

// Close stops it and ends every connection.
func (p *Postgres) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *Postgres) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_ = p.serve(c)
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
			_ = c.Close()
		}()
	}
}

// Protocol constants (PostgreSQL's "Frontend/Backend Protocol" chapter).
const (
	pgProtocol3    = 196608   // 3.0
	pgSSLRequest   = 80877103 // 1234.5679
	pgGSSRequest   = 80877104
	pgAuthOK       = 0
	pgAuthPassword = 3 // cleartext: the stand-in compares it as given
)

// serve runs one connection: startup, password, then simple queries.
func (p *Postgres) serve(c net.Conn) error {
	r := bufio.NewReader(c)
	params, err := p.startup(r, c)
	if err != nil {
		return err
	}
	user := params["user"]
	if err := pgSend(c, 'R', pgInt32(pgAuthPassword)); err != nil {
		return err
	}
	typ, body, err := pgRead(r)
	if err != nil {
		return err
	}
	if typ != 'p' {
		return pgFatal(c, "08P01", fmt.Sprintf("expected password response, got message type %d", typ))
	}
	password := string(bytes.TrimSuffix(body, []byte{0}))
	p.mu.Lock()
	good, known := p.passwords[user]
	p.mu.Unlock()
	if !known || password == "" || password != good {
		// What PostgreSQL 15 sends for a wrong password (and, so as not
		// to tell whether a user exists, for an unknown user too).
		return pgError(c, "FATAL", "28P01", fmt.Sprintf("password authentication failed for user %q", user), "auth_failed")
	}
	p.mu.Lock()
	p.logins++
	p.mu.Unlock()
	var ok []byte
	ok = append(ok, pgMessage('R', pgInt32(pgAuthOK))...)
	for _, kv := range [][2]string{{"server_version", "15.14"}, {"server_encoding", "UTF8"}, {"client_encoding", "UTF8"}, {"DateStyle", "ISO, MDY"}, {"integer_datetimes", "on"}, {"standard_conforming_strings", "on"}} {
		ok = append(ok, pgMessage('S', pgStrings(kv[0], kv[1]))...)
	}
	ok = append(ok, pgMessage('K', append(pgInt32(4242), pgInt32(0x5eed)...))...)
	ok = append(ok, pgMessage('Z', []byte{'I'})...)
	if _, err := c.Write(ok); err != nil {
		return err
	}
	inTx := false
	for {
		typ, body, err := pgRead(r)
		if err != nil {
			return err
		}
		switch typ {
		case 'X':
			return nil
		case 'Q':
			q := strings.TrimSpace(string(bytes.TrimSuffix(body, []byte{0})))
			p.mu.Lock()
			p.queries = append(p.queries, q)
			p.mu.Unlock()
			out, tx := pgAnswer(q, inTx)
			inTx = tx
			if _, err := c.Write(out); err != nil {
				return err
			}
		default:
			return pgFatal(c, "0A000", fmt.Sprintf("the stand-in speaks the simple query protocol only (got message type %q)", typ))
		}
	}
}

// startup reads the startup packet, declining SSL and GSS encryption first.
func (p *Postgres) startup(r *bufio.Reader, c net.Conn) (map[string]string, error) {
	for {
		var n int32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return nil, err
		}
		if n < 8 || n > 10000 {
			return nil, errors.New("postgres stand-in: bad startup length")
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		code := binary.BigEndian.Uint32(body[:4])
		switch code {
		case pgSSLRequest, pgGSSRequest:
			if _, err := c.Write([]byte{'N'}); err != nil {
				return nil, err
			}
			continue
		case pgProtocol3:
		default:
			return nil, pgFatal(c, "0A000", fmt.Sprintf("unsupported frontend protocol %d", code))
		}
		params := map[string]string{}
		fields := bytes.Split(bytes.TrimRight(body[4:], "\x00"), []byte{0})
		for i := 0; i+1 < len(fields); i += 2 {
			params[string(fields[i])] = string(fields[i+1])
		}
		return params, nil
	}
}

// pgAnswer answers one simple query: transaction control by its tag,
// anything else with one row holding "1".
func pgAnswer(q string, inTx bool) (out []byte, tx bool) {
	upper := strings.ToUpper(q)
	status := func(tx bool) byte {
		if tx {
			return 'T'
		}
		return 'I'
	}
	switch {
	case strings.HasPrefix(upper, "BEGIN"), strings.HasPrefix(upper, "START TRANSACTION"):
		out = append(pgMessage('C', pgStrings("BEGIN")), pgMessage('Z', []byte{'T'})...)
		return out, true
	case strings.HasPrefix(upper, "ROLLBACK"), strings.HasPrefix(upper, "COMMIT"):
		tag := "ROLLBACK"
		if strings.HasPrefix(upper, "COMMIT") {
			tag = "COMMIT"
		}
		out = append(pgMessage('C', pgStrings(tag)), pgMessage('Z', []byte{'I'})...)
		return out, false
	}
	var desc []byte
	desc = binary.BigEndian.AppendUint16(desc, 1)
	desc = append(desc, pgStrings("?column?")...)
	desc = binary.BigEndian.AppendUint32(desc, 0)          // table OID
	desc = binary.BigEndian.AppendUint16(desc, 0)          // attribute number
	desc = binary.BigEndian.AppendUint32(desc, 25)         // type OID: text
	desc = binary.BigEndian.AppendUint16(desc, 0xffff)     // typlen -1
	desc = binary.BigEndian.AppendUint32(desc, 0xffffffff) // typmod -1
	desc = binary.BigEndian.AppendUint16(desc, 0)          // text format
	var row []byte
	row = binary.BigEndian.AppendUint16(row, 1)
	row = binary.BigEndian.AppendUint32(row, 1)
	row = append(row, '1')
	out = append(out, pgMessage('T', desc)...)
	out = append(out, pgMessage('D', row)...)
	out = append(out, pgMessage('C', pgStrings("SELECT 1"))...)
	out = append(out, pgMessage('Z', []byte{status(inTx)})...)
	return out, inTx
}

// pgError sends an ErrorResponse with PostgreSQL's fields, then closes.
func pgError(c net.Conn, severity, code, message, routine string) error {
	var b []byte
	for _, f := range []struct {
		tag byte
		val string
	}{{'S', severity}, {'V', severity}, {'C', code}, {'M', message}, {'F', "auth.c"}, {'L', "326"}, {'R', routine}} {
		b = append(b, f.tag)
		b = append(b, f.val...)
		b = append(b, 0)
	}
	b = append(b, 0)
	if err := pgSend(c, 'E', b); err != nil {
		return err
	}
	return io.EOF
}

func pgFatal(c net.Conn, code, message string) error {
	return pgError(c, "FATAL", code, message, "ProcessStartupPacket")
}

func pgRead(r *bufio.Reader) (byte, []byte, error) {
	typ, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	var n int32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return 0, nil, err
	}
	if n < 4 || n > 1<<20 {
		return 0, nil, errors.New("postgres stand-in: bad message length")
	}
	body := make([]byte, n-4)
	_, err = io.ReadFull(r, body)
	return typ, body, err
}

func pgMessage(typ byte, body []byte) []byte {
	out := []byte{typ}
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)+4)) //nolint:gosec // G115: bodies here are a few bytes
	return append(out, body...)
}

func pgSend(c net.Conn, typ byte, body []byte) error {
	_, err := c.Write(pgMessage(typ, body))
	return err
}

func pgInt32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func pgStrings(ss ...string) []byte {
	var b []byte
	for _, s := range ss {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}
