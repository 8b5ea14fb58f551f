package oauth

import (
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTExpiry reads the exp claim of a credential that is a JWT, with or
// without a "Bearer " prefix, without verifying it: only the expiry is
// wanted, to warn before it comes. ok is false for anything else.
func JWTExpiry(credential string) (time.Time, bool) {
	s := strings.TrimSpace(credential)
	if len(s) > 7 && strings.EqualFold(s[:7], "bearer ") {
		s = strings.TrimSpace(s[7:])
	}
	if strings.Count(s, ".") != 2 || len(s) > 16<<10 || !strings.HasPrefix(s, "ey") {
		return time.Time{}, false
	}
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(s, &claims); err != nil || claims.ExpiresAt == nil {
		return time.Time{}, false
	}
	return claims.ExpiresAt.Time, true
}

func asError[T error](err error, target *T) bool { return errors.As(err, target) }
