package codec

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
)

// ServerOptions configure the codec server's HTTP handler.
type ServerOptions struct {
	// Token is the bearer token every /encode and /decode request must
	// carry; empty means none is asked for (only for a server on
	// loopback that nothing else can reach, which the caller checks).
	Token string
	// Origins may call the server from a browser (the Web UI's origin,
	// e.g. http://localhost:8080); CORS answers name only these.
	Origins []string
	// MaxBody caps a request's body in bytes (0 is DefaultMaxBody): a
	// bigger one is refused with 413 before it is decoded, so one request
	// cannot take the server's memory.
	MaxBody int64
}

// DefaultMaxBody is the cap on a request's body when ServerOptions.MaxBody
// is 0: 8 MiB, several times the 2 MiB Temporal allows a payload by
// default, so a page of history decodes in one request.
const DefaultMaxBody = 8 << 20

// Handler serves Temporal's remote codec protocol (POST …/encode and
// …/decode with JSON Payloads, as the Web UI and `temporal
// --codec-endpoint` send them) for keys. Preflight requests from an
// allowed origin are answered without the token, since browsers never
// send credentials on a preflight; every other request needs it. Without
// a token, a request naming any Origin but opts.Origins is refused: a
// browser names the page that sent it, and only the Web UI's pages may
// use a server that asks nothing else (a page that rebinds its own name
// to 127.0.0.1 names itself, and is refused here as well as by the Host
// check in front).
func Handler(keys *Keys, opts ServerOptions) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(New(keys))
	maxBody := cmp.Or(opts.MaxBody, DefaultMaxBody)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(opts.Origins, origin)
		if origin != "" && !allowed && opts.Token == "" {
			http.Error(w, fmt.Sprintf("origin %s not allowed: this codec server asks no token, so it answers only pages of the origins given with --origin", origin), http.StatusForbidden)
			return
		}
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Namespace")
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			if !allowed {
				http.Error(w, "origin not allowed (start the codec server with --origin set to the Web UI's address)", http.StatusForbidden)
				return
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if opts.Token != "" && !bearerOK(r.Header.Get("Authorization"), opts.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="longrun codec"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		if !capBody(w, r, maxBody) {
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// capBody reads r's body, at most max bytes, into memory for the handler;
// a body over max is answered with 413 and false. The declared length is
// checked first, so a client announcing a huge body is refused before it
// sends it.
func capBody(w http.ResponseWriter, r *http.Request, max int64) bool {
	tooBig := func() bool {
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("request body over %d bytes: send fewer payloads per request, or start the codec server with a larger --max-body", max), http.StatusRequestEntityTooLarge)
		return false
	}
	if r.ContentLength > max {
		return tooBig()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return tooBig()
		}
		http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// bearerOK compares in constant time, so the token cannot be guessed a
// byte at a time from response times.
func bearerOK(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}
