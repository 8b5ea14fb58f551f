package issuer_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// clientVia is the check's own client (issuer.NewClient), reaching the
// stand-ins through proxy and trusting its CA, as HTTPS_PROXY and
// SSL_CERT_FILE make it do in a real run.
func clientVia(t *testing.T, proxy *peertest.Proxy) *http.Client {
	t.Helper()
	c := issuer.NewClient()
	tr := c.Transport.(*http.Transport)
	u, err := url.Parse(proxy.URL())
	if err != nil {
		t.Fatal(err)
	}
	tr.Proxy = http.ProxyURL(u)
	pem, err := os.ReadFile(proxy.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr.TLSClientConfig.RootCAs = pool
	return c
}

// serverOf is a server given the service's credentials under their first
// names: the primary's value v, each companion its sample good value.
func serverOf(svc *issuer.Service, ans peertest.Answers, v string) issuer.Server {
	s := issuer.Server{Command: "my-server", Env: map[string]string{}}
	for i, c := range svc.Credentials {
		value := ans.Credentials[c.Role].Good
		if i == 0 {
			value = v
		}
		s.Env[c.Names[0]] = value
		if i == 0 {
			s.Values = append(s.Values, issuer.Value{Name: "env:" + c.Names[0], Value: value})
		}
	}
	return s
}

// Every service of the catalogue, asked about a good, a fake, an expiring
// and a revoked credential at a stand-in that answers as its
// documentation shows, and with the service down: accepted, rejected,
// accepted with the expiry, rejected, unreachable. The credential never
// appears in what is kept of an answer.
func TestCatalogueAgainstStandIns(t *testing.T) {
	for _, svc := range issuer.Catalogue() {
		t.Run(svc.ID, func(t *testing.T) {
			ans, err := peertest.LoadAnswers(svc.ID)
			if err != nil {
				t.Fatalf("documented answers: %v", err)
			}
			good, fake := ans.Credentials[svc.Credentials[0].Role].Good, ans.Credentials[svc.Credentials[0].Role].Fake
			if good == "" || fake == "" || good == fake {
				t.Fatalf("answers: want a good and a fake sample of the primary credential")
			}
			// A service with no one host (a customer's own site) is
			// stood in for at the site its first setting names.
			base, site := svc.Base.URL, ""
			if base == "" {
				site = "https://" + svc.ID + ".example.test"
				base = site
			}
			api, err := peertest.NewIssuerAt(svc.ID, base, good)
			if err != nil {
				t.Fatal(err)
			}
			defer api.Close()
			proxy, err := peertest.NewProxy(api)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			client := clientVia(t, proxy)
			defer client.CloseIdleConnections() // before the proxy waits for its tunnels

			check := func(v string) probe.IssuerCheck {
				t.Helper()
				srv := serverOf(svc, ans, v)
				if site != "" {
					if st := svc.Base.Settings[0]; st.Env != "" {
						srv.Env[st.Env] = site
					} else {
						srv.Args = append(srv.Args, st.Arg, site)
					}
				}
				ties := issuer.Match(srv)
				if len(ties) != 1 || ties[0].Service != svc {
					t.Fatalf("the sample credential under its first name ties to %d services, want this one", len(ties))
				}
				if ties[0].Skip != "" {
					t.Fatalf("skipped: %s", ties[0].Skip)
				}
				got := issuer.Check(context.Background(), client, ties[0], "test")
				for _, secret := range []string{good, fake} {
					if strings.Contains(got.Quote+got.Note, secret) {
						t.Errorf("the answer kept holds the credential: %q", got.Quote)
					}
				}
				return got
			}
			if got := check(good); got.Verdict != probe.IssuerAccepted || got.Expiry != nil && ans.Expiring != nil {
				t.Errorf("good: %+v, want accepted with no expiry", got)
			}
			if got := check(fake); got.Verdict != probe.IssuerRejected || got.Quote == "" {
				t.Errorf("fake: %+v, want rejected, quoting the service", got)
			}
			if ans.Expiring != nil {
				at := time.Now().Add(72 * time.Hour).Truncate(time.Second)
				api.ExpireAt(good, at)
				got := check(good)
				if got.Verdict != probe.IssuerAccepted || got.Expiry == nil || got.Expiry.Sub(at).Abs() > 24*time.Hour {
					t.Errorf("expiring: %+v, want accepted, expiring about %s", got, at)
				}
				api.Accept(good)
			} else if svc.Expiry != nil {
				t.Errorf("the catalogue reads an expiry the answers never show")
			}
			api.Revoke(good)
			if got := check(good); got.Verdict != probe.IssuerRejected {
				t.Errorf("revoked: %+v, want rejected", got)
			}
			api.Accept(good)
			api.Down(true)
			client.CloseIdleConnections() // a kept tunnel would still reach it
			if got := check(good); got.Verdict != probe.IssuerUnreachable {
				t.Errorf("down: %+v, want unreachable (never a rejection)", got)
			}
			if api.Writes() != 0 {
				t.Errorf("%d requests were not the catalogue's request", api.Writes())
			}
		})
	}
}
