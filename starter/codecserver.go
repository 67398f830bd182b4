package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/hostcheck"
)

// EnvCodecTokenFile names the codec server's token file when --token-file
// is not given.
const EnvCodecTokenFile = "LONGRUN_CODEC_TOKEN_FILE"

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// cmdCodecServer serves the remote codec protocol with the worker's keys,
// so the Web UI and `temporal --codec-endpoint` show decrypted payloads
// while Temporal itself only ever holds ciphertext.
func (a *app) cmdCodecServer(ctx context.Context, fs *flag.FlagSet, args []string) error {
	listen := fs.String("listen", "127.0.0.1:8081", "address to serve on")
	var origins stringList
	fs.Var(&origins, "origin", "a browser origin that may call the server, e.g. the Web UI's http://localhost:8233 (repeatable)")
	tokenFile := fs.String("token-file", a.getenv(EnvCodecTokenFile), "file holding the bearer token every request must carry (env "+EnvCodecTokenFile+")")
	noToken := fs.Bool("no-token", false, "serve without a token: only on a loopback address, for a Web UI without login on this machine; a browser request from any origin but --origin is then refused")
	// A container must listen on 0.0.0.0 for its published port to reach
	// it; whoever publishes that port on the host's loopback alone (the
	// compose stack does, and its test checks it) says so here.
	publishedOnLoopback := fs.Bool("published-on-loopback", false, "with --no-token: the listen address is inside a container whose port the host publishes on 127.0.0.1 only, so a non-loopback --listen is allowed")
	var hosts stringList
	fs.Var(&hosts, "allowed-host", "a host name the server answers to besides localhost and loopback addresses, as clients send it in Host (e.g. codec.example.com; repeatable): any other is refused, so DNS rebinding cannot reach it")
	maxBody := fs.Int64("max-body", codec.DefaultMaxBody, "largest request body in bytes; a bigger one is refused with 413")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *maxBody <= 0 {
		return usagef("--max-body %d: want a number of bytes above 0", *maxBody)
	}
	policy, err := hostcheck.New(*listen, hosts, "--allowed-host")
	if err != nil {
		return usagef("%v", err)
	}
	if a.cfg.EncryptionKeys == "" {
		return usagef("no keys: give --encryption-keys FILE (or %s), the worker's key file", codec.EnvKeysFile)
	}
	if err := a.loadKeys(); err != nil {
		return err
	}
	var token string
	switch {
	case *tokenFile != "" && *noToken:
		return usagef("--token-file and --no-token exclude each other")
	case *tokenFile != "":
		if token, err = readTokenFile(*tokenFile); err != nil {
			return err
		}
	case *noToken:
		if !loopback(*listen) && !*publishedOnLoopback {
			return usagef("--no-token on %s: anyone who reaches it could decrypt every payload; serve on 127.0.0.1, give --token-file, "+
				"or, in a container whose port the host publishes on 127.0.0.1 only, add --published-on-loopback", *listen)
		}
	default:
		return usagef("give --token-file F (the bearer token callers send), or --no-token on a loopback address")
	}
	for _, o := range origins {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") || strings.HasSuffix(o, "/") {
			return usagef("--origin %q: want scheme://host[:port] as the browser sends it, e.g. http://localhost:8233", o)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	srv := &http.Server{
		Handler:           hostcheck.Wrap(policy, codec.Handler(a.cfg.keys, codec.ServerOptions{Token: token, Origins: origins, MaxBody: *maxBody})),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(a.stderr, "codec server on http://%s (keys %s; encrypting with %s; origins %s; token %v)\n",
		ln.Addr(), strings.Join(a.cfg.keys.IDs(), ","), a.cfg.keys.Current(), cmp.Or(origins.String(), "none"), token != "")
	return serveUntil(ctx, srv, ln, "codec server")
}

// readTokenFile reads a --token-file: the token is the file's text without
// surrounding space, and an empty file is refused rather than taken as "no
// token".
func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty", path)
	}
	return token, nil
}

// serveUntil serves srv on ln until ctx ends (Ctrl-C), then shuts it down,
// letting requests in flight finish for a few seconds.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, what string) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// loopback reports whether addr (host:port) listens on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
