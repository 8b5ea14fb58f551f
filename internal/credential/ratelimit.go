package credential

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateLimit says that, and how, a server or its service refused a request
// for a rate limit or a quota, and when it said to ask again.
type RateLimit struct {
	// Marker, Source and Quote are the Outcome's.
	Marker string `json:"marker"`
	Source string `json:"source"`
	Quote  string `json:"quote"`
	// RetryAfter is the wait it named, ResetAt the time; zero when it
	// named none.
	RetryAfter time.Duration `json:"-"`
	ResetAt    time.Time     `json:"-"`
}

// RateLimit is o as a RateLimit.
func (o Outcome) RateLimit() RateLimit {
	return RateLimit{Marker: o.Marker, Source: o.Source, Quote: o.Quote, RetryAfter: o.RetryAfter, ResetAt: o.ResetAt}
}

// Describe words a rate limit for a report or a log line.
func (r RateLimit) Describe() string { return "rate limited: " + r.Quote }

// The ways an answer says when to ask again, as servers pass their
// service's answer on: its headers (Retry-After: 120, X-RateLimit-Reset:
// 1, 1419704 as Brave sends it, or the epoch second GitHub sends), a JSON
// member (Context7's "retryAfterSeconds": 60, "retry_after": 30), or words
// ("Please try again in 20s", "retry after 5 minutes").
// They are compiled at their first use: most runs of the binary never
// read a rate limit, and compiling them at start cost every one.
var retryPatterns = sync.OnceValue(func() struct{ header, reset, member, words *regexp.Regexp } {
	return struct{ header, reset, member, words *regexp.Regexp }{
		header: regexp.MustCompile(`(?i)retry-after"?\s*[:=]\s*"?(\d{1,10})\b`),
		reset:  regexp.MustCompile(`(?i)x-ratelimit-reset"?\s*[:=]\s*"?([\d,\s]{1,64})`),
		member: regexp.MustCompile(`(?i)"retry_?after(_?seconds|_?secs|_?s)?"\s*:\s*"?(\d+(?:\.\d+)?)`),
		words:  regexp.MustCompile(`(?i)(?:try again|retry)(?: after| in)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b`),
	}
})

// epochFloor: a reset value this large is a time (epoch seconds), not a
// wait (2001-09-09).
const epochFloor = 1_000_000_000

// retryAfter reads when text says to ask again: a wait, or a time (a
// reset given as an epoch second). Of several, the longest: a monthly
// quota's reset outlasts a per-second window's, and asking before it is
// asking in vain.
func retryAfter(text string) (wait time.Duration, at time.Time) {
	text = head(text)
	re := retryPatterns()
	longer := func(d time.Duration) {
		if d > wait {
			wait = d
		}
	}
	for _, m := range re.header.FindAllStringSubmatch(text, 4) {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			longer(seconds(n))
		}
	}
	for _, m := range re.reset.FindAllStringSubmatch(text, 4) {
		for _, f := range strings.Split(m[1], ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			switch {
			case err != nil:
			case n >= epochFloor:
				if t := time.Unix(n, 0); t.After(at) {
					at = t
				}
			default:
				longer(seconds(n))
			}
		}
	}
	for _, m := range re.member.FindAllStringSubmatch(text, 4) {
		if f, err := strconv.ParseFloat(m[2], 64); err == nil {
			longer(time.Duration(f * float64(time.Second)))
		}
	}
	for _, m := range re.words.FindAllStringSubmatch(text, 4) {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		unit := time.Second
		switch u := strings.ToLower(m[2]); {
		case strings.HasPrefix(u, "ms"), strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case strings.HasPrefix(u, "m"):
			unit = time.Minute
		case strings.HasPrefix(u, "h"):
			unit = time.Hour
		}
		longer(time.Duration(f * float64(unit)))
	}
	return wait, at
}

// seconds is n seconds, bounded to a year: a wait is a hint, never a
// reason to overflow.
func seconds(n int64) time.Duration {
	return time.Duration(min(max(n, 0), 366*24*3600)) * time.Second
}
