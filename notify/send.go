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
	"strings"
	"time"
)

// Headers every post carries.
const (
	// HeaderSignature is "sha256=<hex>", the HMAC-SHA256 of the body
	// under the worker's secret, sent when it has one.
	HeaderSignature = "X-Longrun-Signature"
	// HeaderIdempotencyKey is Event.Key, the same on every redelivery.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderEvent is Event.Event, so a receiver can route without parsing.
	HeaderEvent = "X-Longrun-Event"
)

// RequestTimeout bounds one post, body included.
const RequestTimeout = 15 * time.Second

// Sign is the X-Longrun-Signature value of body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether sig is body's signature under secret, in
// constant time: what a receiver does first.
func Verify(secret, body []byte, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(Sign(secret, body)))
}

// Sender posts events to the worker's sinks. Its URLs and secret are the
// worker's configuration: they never enter an Event, a Result or an error
// (all of which reach history), and never a sandbox.
type Sender struct {
	// Webhooks get Body as JSON; Slack gets SlackMessage.
	Webhooks, Slack []string
	// Secret, if set, signs every body (HeaderSignature).
	Secret []byte
	Render Render
	// Dir is where deliveries are recorded (one file per sink and key),
	// in the worker's state directory; "" records nothing, and a
	// retried post may then be sent again.
	Dir string
	// Client posts; nil is a client with RequestTimeout.
	Client *http.Client
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
		req.Header.Set(HeaderSignature, Sign(s.Secret, payload))
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
		if err := record(rec, ev.Key, label); err != nil {
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
// fine. It is synced, so a machine that crashes right after does not
// forget it.
func record(path, key, label string) error {
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
