package transcript

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Open opens the store spec names: an s3:// URL (see ParseS3URL) or a
// local directory. It returns the store and a description of it for the
// worker's start-up log. An S3 store is checked before Open returns
// (NewS3); ctx bounds that check.
func Open(ctx context.Context, spec string) (Store, string, error) {
	if !hasScheme.MatchString(spec) {
		d, err := NewDir(spec)
		if err != nil {
			return nil, "", err
		}
		return d, d.Path(), nil
	}
	cfg, err := ParseS3URL(spec)
	if err != nil {
		return nil, "", err
	}
	s, err := NewS3(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	return s, s.String(), nil
}

// hasScheme matches a spec that is a URL rather than a path: another
// scheme (gs://, S3://) must be refused, not become a directory "gs:".
var hasScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// s3Params are the query parameters of an s3:// URL; any other is refused,
// so a typo does not silently fall back to a default.
var s3Params = []string{"endpoint", "region", "insecure"}

// ParseS3URL reads s3://bucket/prefix?endpoint=host:port&region=R&insecure=1.
// The prefix is optional; endpoint defaults to AWS S3 and insecure (plain
// HTTP) to off. Credentials never go in the URL, which ends up in logs and
// process lists: they come from the environment (see S3Config).
func ParseS3URL(spec string) (S3Config, error) {
	shown := spec
	if at := strings.LastIndex(spec, "@"); at >= 0 {
		// A secret someone put in the URL stays out of the error, which
		// is logged.
		shown = "s3://…" + spec[at:]
	}
	bad := func(format string, args ...any) (S3Config, error) {
		return S3Config{}, fmt.Errorf("transcript store %q: %s (want s3://bucket/prefix?endpoint=host:port&region=R&insecure=1)", shown, fmt.Sprintf(format, args...))
	}
	// url.Parse folds the scheme to lower case; the documented form is
	// taken as written, so S3:// is refused here, not parsed.
	if scheme, _, _ := strings.Cut(spec, "://"); scheme != "s3" {
		return bad("unknown scheme %q: a store is a directory or an s3:// URL", scheme)
	}
	u, err := url.Parse(spec)
	if err != nil {
		return bad("%v", err)
	}
	if u.User != nil {
		return bad("credentials do not go in the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Fragment != "" || u.Port() != "" {
		return bad("the bucket is the host part, alone")
	}
	if u.Host == "" {
		return bad("no bucket")
	}
	if err := s3utils.CheckValidBucketName(u.Host); err != nil {
		return bad("bucket %q: %v", u.Host, err)
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/")}
	if cfg.Prefix != "" && !strings.HasSuffix(cfg.Prefix, "/") {
		cfg.Prefix += "/"
	}
	if strings.HasPrefix(cfg.Prefix, "/") || strings.Contains(cfg.Prefix, "//") {
		return bad("prefix %q has an empty segment", cfg.Prefix)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	for k, v := range q {
		if !slices.Contains(s3Params, k) {
			return bad("unknown parameter %q (have: %s)", k, strings.Join(s3Params, ", "))
		}
		if len(v) > 1 {
			return bad("parameter %q given %d times", k, len(v))
		}
	}
	cfg.Endpoint, cfg.Region = q.Get("endpoint"), q.Get("region")
	if strings.Contains(cfg.Endpoint, "/") {
		return bad("endpoint %q: want host or host:port, no scheme or path (insecure=1 for plain HTTP)", cfg.Endpoint)
	}
	switch v := q.Get("insecure"); v {
	case "", "0", "false":
	case "1", "true":
		cfg.Insecure = true
	default:
		return bad("insecure=%q: want 1 or 0", v)
	}
	return cfg, nil
}
