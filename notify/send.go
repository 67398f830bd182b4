package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/longrun/longrun/durable"
)

// Headers every post carries.
const (
	// HeaderSignature is "t=<unix seconds>,v1=<hex>", sent when the worker
	// has a secret: v1 is the HMAC-SHA256 under the secret of the
	// timestamp, the event, the idempotency key and the body (SignedText),
	// so none of them can be changed or replayed later without the secret
	// (Verify).
	HeaderSignature = "X-Longrun-Signature"
	// HeaderIdempotencyKey is Event.Key, the same on every redelivery.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderEvent is Event.Event, so a receiver can route without parsing.
	HeaderEvent = "X-Longrun-Event"
)

// RequestTimeout bounds one post, body included.
const RequestTimeout = 15 * time.Second

// ReplayWindow is how far a signature's timestamp may be from the
// receiver's clock: Verify refuses a post signed longer ago (a capture
// replayed later) or further ahead. Within it, a receiver drops a second
// post of one Idempotency-Key, which every redelivery carries.
const ReplayWindow = 5 * time.Minute

// Errors of Verify.
var (
	ErrMalformedSignature = errors.New("malformed " + HeaderSignature + ": want t=<unix seconds>,v1=<hex>")
	ErrBadSignature       = errors.New("signature does not match the timestamp, event, idempotency key and body under the secret")
	ErrStaleSignature     = errors.New("signature timestamp outside the replay window")
)

// SignedText is what a signature covers: the timestamp in unix seconds,
// the event (HeaderEvent), the idempotency key (HeaderIdempotencyKey) and
// the body, each of the first three followed by a newline. No header
// value holds a newline, so no two posts share a text.
func SignedText(t int64, event, key string, body []byte) []byte {
	head := strconv.FormatInt(t, 10) + "\n" + event + "\n" + key + "\n"
	return append([]byte(head), body...)
}

// Sign is the X-Longrun-Signature value of a post of body for event and
// key at t under secret.
func Sign(secret []byte, t time.Time, event, key string, body []byte) string {
	ts := t.Unix()
	return "t=" + strconv.FormatInt(ts, 10) + ",v1=" + hexHMAC(secret, SignedText(ts, event, key, body))
}

func hexHMAC(secret, text []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(text)
	return hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a post as a receiver gets it: sig is its
// X-Longrun-Signature, event and key its X-Longrun-Event and
// Idempotency-Key, body its exact bytes, now the receiver's clock. It
// compares in constant time and refuses a timestamp further than
// ReplayWindow from now. A v1 value it cannot match (a later scheme
// beside it, a rotated secret) is skipped; one match is enough.
func Verify(secret []byte, sig, event, key string, body []byte, now time.Time) error {
	var ts int64
	var macs []string
	haveT := false
	for part := range strings.SplitSeq(sig, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return ErrMalformedSignature
		case k == "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || haveT {
				return ErrMalformedSignature
			}
			ts, haveT = n, true
		case k == "v1":
			macs = append(macs, v)
		}
	}
	if !haveT || len(macs) == 0 {
		return ErrMalformedSignature
	}
	want := hexHMAC(secret, SignedText(ts, event, key, body))
	matched := false
	for _, m := range macs {
		if hmac.Equal([]byte(m), []byte(want)) {
			matched = true
		}
	}
	if !matched {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > ReplayWindow || d < -ReplayWindow {
		return fmt.Errorf("%w: signed at %s, %s from now (the window is %s either way)", ErrStaleSignature,
			time.Unix(ts, 0).UTC().Format(time.RFC3339), d.Round(time.Second), ReplayWindow)
	}
	return nil
}

// VerifyRequest is Verify on a received request and its body, read by
// the caller (at most what it accepts): the headers are the request's.
func VerifyRequest(secret []byte, r *http.Request, body []byte, now time.Time) error {
	return Verify(secret, r.Header.Get(HeaderSignature), r.Header.Get(HeaderEvent), r.Header.Get(HeaderIdempotencyKey), body, now)
}

// Sender posts events to the worker's sinks. Its URLs and secret are the
// worker's configuration: they never enter an Event, a Result or an error
// (all of which reach history), and never a sandbox.
type Sender struct {
	// Webhooks get Body as JSON; Slack gets SlackMessage.
	Webhooks, Slack []string
	// Secret, if set, signs every post (HeaderSignature).
	Secret []byte
	Render Render
	// Dir is where deliveries are recorded (one file per sink and key),
	// in the worker's state directory; "" records nothing, and a
	// retried post may then be sent again.
	Dir string
	// Client posts; nil is a client with RequestTimeout.
	Client *http.Client
	// Now is the clock signatures are stamped with; nil is time.Now.
	Now func() time.Time

	w durable.Writer // a test sees through it which directories are synced
}

// Sinks reports how many sinks s posts to.
func (s *Sender) Sinks() int {
	if s == nil {
		return 0
	}
	return len(s.Webhooks) + len(s.Slack)
}

// Result says what one Send did, by sink label ("webhook 1", "slack 1"):
// never a URL, since it is recorded in history.
type Result struct {
	// Delivered are the sinks that answered 2xx to this attempt.
	Delivered []string `json:"delivered,omitempty"`
	// AlreadyDelivered are the sinks an earlier attempt delivered to (the
	// record says so): not posted again.
	AlreadyDelivered []string `json:"already_delivered,omitempty"`
}

// RejectedError is a sink's 4xx answer: the same post cannot succeed, so
// it is not retried.
type RejectedError struct {
	Sink   string
	Status int
	Body   string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("%s rejected the notification: HTTP %d %s", e.Sink, e.Status, e.Body)
}

// Send posts ev to every sink the record does not show as delivered. A
// sink's delivery is recorded as soon as it answers 2xx, before its
// answer is read to the end, so a worker killed after that never posts
// it again; a worker killed before that posts it again on the retry,
// with the same Idempotency-Key, for the receiver to drop. The error,
// if any, joins every sink's failure; each is a *RejectedError when the
// sink refused the post (4xx but 408, 425, 429).
func (s *Sender) Send(ctx context.Context, ev Event) (Result, error) {
	var res Result
	if ev.Key == "" {
		return res, errors.New("notification without an idempotency key: refused, it could be sent twice")
	}
	body, err := NewBody(ev, s.Render).Marshal()
	if err != nil {
		return res, err
	}
	slack, err := NewSlack(ev, s.Render).Marshal()
	if err != nil {
		return res, err
	}
	type sink struct{ label, kind, url string }
	var sinks []sink
	for i, u := range s.Webhooks {
		sinks = append(sinks, sink{fmt.Sprintf("webhook %d", i+1), "webhook", u})
	}
	for i, u := range s.Slack {
		sinks = append(sinks, sink{fmt.Sprintf("slack %d", i+1), "slack", u})
	}
	var errs []error
	for _, k := range sinks {
		rec := s.recordPath(ev.Key, k.kind, k.url)
		if rec != "" {
			if _, err := os.Stat(rec); err == nil {
				res.AlreadyDelivered = append(res.AlreadyDelivered, k.label)
				continue
			}
		}
		payload := body
		if k.kind == "slack" {
			payload = slack
		}
		if err := s.post(ctx, k.label, k.url, rec, ev, payload); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Delivered = append(res.Delivered, k.label)
	}
	return res, errors.Join(errs...)
}

// post sends one payload and records its delivery at rec.
func (s *Sender) post(ctx context.Context, label, target, rec string, ev Event, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(payload))
	if err != nil {
		// The URL was checked at start (ParseURL); say which sink, not
		// the URL, which may hold a token.
		return fmt.Errorf("%s: build request: %v", label, scrub(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "longrun-notify")
	req.Header.Set(HeaderIdempotencyKey, ev.Key)
	req.Header.Set(HeaderEvent, ev.Event)
	if len(s.Secret) > 0 {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		// Stamped per attempt: a redelivery is signed afresh, inside the
		// receiver's window, with the same key for it to drop.
		req.Header.Set(HeaderSignature, Sign(s.Secret, now(), ev.Event, ev.Key, payload))
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: RequestTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: post: %v", label, scrub(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// Recorded before the answer's body is read: the sink has taken
		// the post, whatever happens to this worker next.
		if err := s.record(rec, ev.Key, label); err != nil {
			return fmt.Errorf("%s: delivered, but %w", label, err)
		}
		// Read to the end so the connection can serve the next post.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	switch st := resp.StatusCode; {
	case st >= 400 && st < 500 && st != http.StatusRequestTimeout && st != http.StatusTooEarly && st != http.StatusTooManyRequests:
		return &RejectedError{Sink: label, Status: st, Body: strings.TrimSpace(string(text))}
	default:
		return fmt.Errorf("%s: HTTP %d %s", label, st, strings.TrimSpace(string(text)))
	}
}

// recordPath is the file recording that key was delivered to the sink;
// named by a hash, so the URL is not written anywhere.
func (s *Sender) recordPath(key, kind, target string) string {
	if s.Dir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(key + "\x00" + kind + "\x00" + target))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:]))
}

// record writes the delivery record, O_EXCL as job logs are: a record
// already there (a race with another attempt that also got a 2xx) is
// fine. The file and then its directory are synced, so a machine that
// crashes right after keeps the record under its name (a synced file
// whose new name was not yet on the disk is lost with it, and the event
// would be sent again). Only its existence is read, so a record cut short
// by the crash still counts.
func (s *Sender) record(path, key, label string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record delivery %s: %w", key, err)
	}
	_, werr := fmt.Fprintf(f, "%s\n%s\n%s\n", key, label, time.Now().UTC().Format(time.RFC3339))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("record delivery %s: %w", key, err)
	}
	if err := s.w.Sync(filepath.Dir(path)); err != nil {
		return fmt.Errorf("record delivery %s: %w", key, err)
	}
	return nil
}

// scrub drops the URL a *url.Error carries: it may hold a token, and the
// error ends up in history.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ParseURL checks a sink's URL at the worker's start, saying what is
// wrong without echoing it (it may hold a token).
func ParseURL(flag, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s: not a URL: %v", flag, scrub(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: want an http:// or https:// URL, got scheme %q", flag, u.Scheme)
	case u.Host == "":
		return fmt.Errorf("%s: URL has no host", flag)
	}
	return nil
}
