package peertest

import (
	"encoding/json"
	"net/http"
)

// figmaOrigin is Figma's REST API, which figma-developer-mcp calls with a
// personal access token (--figma-api-key or FIGMA_API_KEY, sent as
// X-Figma-Token), through the global fetch.
const figmaOrigin = "https://api.figma.com"

// Figma's answers to a token it does not take and to a file it does not
// have (https://www.figma.com/developers/api#errors).
var (
	figmaInvalidToken = json.RawMessage(`{"status":403,"err":"Invalid token"}`)
	figmaNotFound     = json.RawMessage(`{"status":404,"err":"Not found"}`)
	figmaNoWrites     = json.RawMessage(`{"status":403,"err":"Forbidden"}`)
)

// NewFigma starts a stand-in of Figma's REST API for a user with no
// files: a file's key answers 404 "Not found", as Figma does for one that
// does not exist, to a token it takes, and 403 "Invalid token" to any
// other.
func NewFigma(tokens ...string) *API {
	return newAPI("Figma", figmaOrigin, func(r *http.Request) string { return r.Header.Get("X-Figma-Token") }, serveFigma, tokens).AnswersIdentity("figma")
}

func serveFigma(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case v != credValid:
		writeJSON(w, http.StatusForbidden, figmaInvalidToken)
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusForbidden, figmaNoWrites)
	default: // no file, and no image of one
		writeJSON(w, http.StatusNotFound, figmaNotFound)
	}
}
