package transcript

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"
)

// fakeS3 is a real S3-protocol HTTP server in the test process (gofakes3
// over memory), counting what reaches it.
type fakeS3 struct {
	backend  *s3mem.Backend
	endpoint string // host:port
	requests atomic.Int64
	puts     atomic.Int64 // PUTs of an object

	mu   sync.Mutex
	auth []http.Header // the signing headers of every request
}

// testBucket is the bucket newFakeS3 creates.
const testBucket = "transcripts"

func newFakeS3(t testing.TB) *fakeS3 {
	t.Helper()
	f := &fakeS3{backend: s3mem.New()}
	require.NoError(t, f.backend.CreateBucket(testBucket))
	s3 := gofakes3.New(f.backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") > 0 {
			f.puts.Add(1)
		}
		f.mu.Lock()
		f.auth = append(f.auth, http.Header{
			"Authorization":        r.Header.Values("Authorization"),
			"X-Amz-Security-Token": r.Header.Values("X-Amz-Security-Token"),
		})
		f.mu.Unlock()
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.endpoint = strings.TrimPrefix(srv.URL, "http://")
	return f
}

// config is the configuration of a store in the fake's bucket. The
// credentials are static, so no test asks the environment or an instance
// metadata service for them.
func (f *fakeS3) config() S3Config {
	return S3Config{Endpoint: f.endpoint, Bucket: testBucket, Prefix: "longrun/", Insecure: true,
		AccessKeyID: "test-key", SecretAccessKey: "test-secret"}
}

func (f *fakeS3) open(t testing.TB) *S3 {
	t.Helper()
	s, err := NewS3(context.Background(), f.config())
	require.NoError(t, err)
	return s
}

// object returns what the fake holds under key.
func (f *fakeS3) object(t testing.TB, key string) string {
	t.Helper()
	obj, err := f.backend.GetObject(testBucket, key, nil)
	require.NoError(t, err)
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	require.NoError(t, err)
	return string(b)
}

// overwrite replaces the object under key behind the store's back.
func (f *fakeS3) overwrite(t testing.TB, key, content string) {
	t.Helper()
	_, err := f.backend.PutObject(testBucket, key, map[string]string{}, strings.NewReader(content), int64(len(content)), nil)
	require.NoError(t, err)
}

const helloKey = "longrun/2c/2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func TestS3RoundTripAndDedup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeS3(t)
	s := f.open(t)
	ref, err := s.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, Ref([]byte("hello")), ref)
	require.Equal(t, "hello", f.object(t, helloKey), "the object is <prefix><2 hex>/<hex>")
	require.EqualValues(t, 1, f.puts.Load())

	got, err := s.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))

	// A second Put of the same content (a retried activity, another
	// worker) finds the object and uploads nothing.
	again, err := s.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, ref, again)
	require.EqualValues(t, 1, f.puts.Load(), "the second Put must not upload")

	// An object of the wrong size is damaged: Put replaces it.
	f.overwrite(t, helloKey, "cut")
	_, err = s.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.EqualValues(t, 2, f.puts.Load())
	require.Equal(t, "hello", f.object(t, helloKey))
}

func TestS3DetectsCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeS3(t)
	s := f.open(t)
	ref, err := s.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	f.overwrite(t, helloKey, "jello") // same size: only the hash tells
	_, err = s.Get(ctx, ref)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, ref)
	require.ErrorContains(t, err, helloKey)
	require.ErrorContains(t, err, "s3://transcripts/longrun/ at http://"+f.endpoint)
	require.ErrorContains(t, err, "it hashes to "+Ref([]byte("jello")))
}

func TestS3MissingIsNotExist(t *testing.T) {
	t.Parallel()
	s := newFakeS3(t).open(t)
	ref := Ref([]byte("never stored"))
	_, err := s.Get(context.Background(), ref)
	require.ErrorIs(t, err, fs.ErrNotExist, "callers treat a missing object as a missing file")
	require.NotErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, ref)
	require.ErrorContains(t, err, "no object longrun/")
	require.ErrorContains(t, err, "s3://transcripts/longrun/")
}

func TestS3RefusesBadRefsWithoutARequest(t *testing.T) {
	t.Parallel()
	f := newFakeS3(t)
	s := f.open(t)
	before := f.requests.Load()
	for _, ref := range []string{
		"", "sha256:", "sha256:../../../../etc/passwd",
		"sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824",
		"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b982",
	} {
		_, err := s.Get(context.Background(), ref)
		require.ErrorIs(t, err, ErrBadRef, ref)
	}
	require.Equal(t, before, f.requests.Load(), "a bad reference must not reach the service")
}

func TestS3RefusesAMissingBucket(t *testing.T) {
	t.Parallel()
	f := newFakeS3(t)
	cfg := f.config()
	cfg.Bucket = "no-such-bucket"
	_, err := NewS3(context.Background(), cfg)
	require.ErrorContains(t, err, `bucket "no-such-bucket" does not exist (create it, or check the bucket name and the endpoint)`)
	require.ErrorContains(t, err, "s3://no-such-bucket/longrun/ at http://"+f.endpoint)

	// A bucket removed under a running worker: the error says what to check.
	s := f.open(t)
	require.NoError(t, f.backend.ForceDeleteBucket(testBucket))
	_, err = s.Put(context.Background(), []byte("hello"))
	require.ErrorContains(t, err, "store "+Ref([]byte("hello"))+" as "+helloKey)
	require.ErrorContains(t, err, `check that bucket "transcripts" exists`)
}

func TestS3UnreachableEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	cfg := S3Config{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: testBucket, Insecure: true,
		AccessKeyID: "k", SecretAccessKey: "s", Region: "us-east-1"}
	srv.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := NewS3(ctx, cfg)
	require.ErrorContains(t, err, "open the transcript store in s3://transcripts/ at http://"+cfg.Endpoint)
	require.ErrorContains(t, err, "check that the endpoint is reachable")
}

func TestS3ChainAndCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &counting{Store: newFakeS3(t).open(t)}
	heads, all := chain(t, s, 5)
	head := heads[len(heads)-1]
	got, err := Load(ctx, s, head)
	require.NoError(t, err)
	require.Equal(t, all, got)
	require.EqualValues(t, len(heads), s.gets.Load(), "without a cache Load reads every segment")

	// A second worker's cache over the same bucket: the first Load reads
	// the chain, an Append through it and the next Load read nothing.
	s.gets.Store(0)
	c := NewCache(s, 64<<20)
	got, err = Load(ctx, c, head)
	require.NoError(t, err)
	require.Equal(t, all, got)
	require.EqualValues(t, len(heads), s.gets.Load())
	next, err := Append(ctx, c, head, turn(5))
	require.NoError(t, err)
	got, err = Load(ctx, c, next)
	require.NoError(t, err)
	require.Equal(t, append(all, turn(5)...), got)
	require.EqualValues(t, len(heads), s.gets.Load(), "the cache extended itself on Append")

	// The new segment is in the bucket: a Load that bypasses the cache
	// finds it.
	got, err = Load(ctx, s.Store, next)
	require.NoError(t, err)
	require.Equal(t, append(all, turn(5)...), got)
}
