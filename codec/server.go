package codec

import (
	"crypto/subtle"
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
}

// Handler serves Temporal's remote codec protocol (POST …/encode and
// …/decode with JSON Payloads, as the Web UI and `temporal
// --codec-endpoint` send them) for keys. Preflight requests from an
// allowed origin are answered without the token, since browsers never
// send credentials on a preflight; every other request needs it.
func Handler(keys *Keys, opts ServerOptions) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(New(keys))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(opts.Origins, origin)
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
		inner.ServeHTTP(w, r)
	})
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
