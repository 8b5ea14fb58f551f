package oauth

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// expiryHorizon bounds how far from now a credential's stated expiry may
// be: about a hundred years either side. A server or a token chooses the
// number; 1e308 seconds would otherwise overflow into a time that no JSON
// encoder writes (the API's and the receipt's) and a metric of -9.22e18.
const expiryHorizon = 100 * 365 * 24 * time.Hour

// expiryIn is now plus seconds, clamped to expiryHorizon either side.
func expiryIn(now time.Time, seconds float64) time.Time {
	limit := expiryHorizon.Seconds()
	switch {
	case math.IsNaN(seconds):
		return time.Time{}
	case seconds > limit:
		return now.Add(expiryHorizon)
	case seconds < -limit:
		return now.Add(-expiryHorizon)
	}
	return now.Add(time.Duration(seconds * float64(time.Second)))
}

// JWTExpiry reads the exp claim of a credential that is a JWT, with or
// without a "Bearer " prefix, without verifying it: only the expiry is
// wanted, to warn before it comes. ok is false for anything else. An exp
// more than about a hundred years away is read as that far (expiryHorizon).
func JWTExpiry(credential string) (time.Time, bool) {
	s := strings.TrimSpace(credential)
	if len(s) > 7 && strings.EqualFold(s[:7], "bearer ") {
		s = strings.TrimSpace(s[7:])
	}
	if strings.Count(s, ".") != 2 || len(s) > 16<<10 || !strings.HasPrefix(s, "ey") {
		return time.Time{}, false
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(s, claims); err != nil {
		return time.Time{}, false
	}
	exp, ok := claims["exp"].(float64)
	if !ok {
		return time.Time{}, false
	}
	now := time.Now()
	return expiryIn(now, exp-float64(now.Unix())), true
}

func asError[T error](err error, target *T) bool { return errors.As(err, target) }
