package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 store keeps its blobs and how to reach it.
type S3Config struct {
	// Endpoint is host[:port] of the service; "" is AWS S3
	// (s3.amazonaws.com).
	Endpoint string
	Bucket   string
	// Prefix starts every key, so one bucket can hold other things too:
	// "" or a path ending in "/".
	Prefix string
	// Region is the bucket's region; "" lets the client ask the service.
	Region string
	// Insecure speaks plain HTTP instead of HTTPS (a MinIO on the local
	// network, a test).
	Insecure bool
	// AccessKeyID, SecretAccessKey and SessionToken are static
	// credentials. Without AccessKeyID they come, as the AWS CLI finds
	// them, from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
	// AWS_SESSION_TOKEN), then the shared credentials file
	// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile
	// AWS_PROFILE or "default"), then the instance's or container's IAM
	// role (web identity included).
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// defaultS3Endpoint is AWS S3's global endpoint; the client finds the
// bucket's region from it.
const defaultS3Endpoint = "s3.amazonaws.com"

// s3Retries bounds the client's own retries of one request. Temporal
// retries the activity anyway; past a few tries a broken store should
// show up there, in the session's history, rather than inside one call.
const s3Retries = 3

// S3 is a Store in a bucket of an S3-compatible service (AWS S3, MinIO,
// Ceph, R2): each blob is the object <prefix><first 2 hex digits>/<hex
// digest>. It is the store for workers on several machines, which must
// share one since a session's next turn may run on any of them. A request
// is bounded by its context only: activities carry their timeouts.
type S3 struct {
	client *minio.Client
	cfg    S3Config
	where  string // s3://bucket/prefix at scheme://endpoint, for errors and logs
}

// NewS3 connects to the bucket cfg names and checks that it exists, so a
// worker with a wrong endpoint, bucket or credentials fails at start-up
// instead of at its first session's model call.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = defaultS3Endpoint
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
	})
	if cfg.AccessKeyID != "" {
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	}
	scheme := "https"
	if cfg.Insecure {
		scheme = "http"
	}
	s := &S3{cfg: cfg, where: fmt.Sprintf("s3://%s/%s at %s://%s", cfg.Bucket, cfg.Prefix, scheme, cfg.Endpoint)}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      creds,
		Secure:     !cfg.Insecure,
		Region:     cfg.Region,
		MaxRetries: s3Retries,
	})
	if err != nil {
		return nil, fmt.Errorf("transcript store %s: %w", s.where, err)
	}
	s.client = client
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, s.fail("open the transcript store", err)
	}
	if !ok {
		return nil, fmt.Errorf("transcript store %s: bucket %q does not exist (create it, or check the bucket name and the endpoint)", s.where, cfg.Bucket)
	}
	return s, nil
}

// String names the bucket, prefix and endpoint, for the start-up log.
func (s *S3) String() string { return s.where }

func (s *S3) key(h string) string { return s.cfg.Prefix + h[:2] + "/" + h }

// Put stores data unless an object of the same size is already under its
// key. A retry or a race with another worker uploads the same bytes under
// the same key, so either write is right; an object of another size is
// damaged and replaced, as Dir does.
func (s *S3) Put(ctx context.Context, data []byte) (string, error) {
	ref := Ref(data)
	if err := s.putBlob(ctx, ref, data); err != nil {
		return "", err
	}
	return ref, nil
}

// putBlob stores blob under ref's key as Put describes.
func (s *S3) putBlob(ctx context.Context, ref string, blob []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := s.key(ref[len(refPrefix):])
	info, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	switch {
	case err == nil && info.Size == int64(len(blob)):
		return nil
	case err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey:
		return s.fail("store "+ref+" as "+key, err)
	}
	_, err = s.client.PutObject(ctx, s.cfg.Bucket, key, bytes.NewReader(blob), int64(len(blob)),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return s.fail("store "+ref+" as "+key, err)
	}
	return nil
}

// Get reads the object ref names and checks that it still hashes to ref.
// A missing object is an fs.ErrNotExist, as a missing file is for Dir, so
// callers need not know which store they have.
func (s *S3) Get(ctx context.Context, ref string) ([]byte, error) {
	data, where, err := s.getBlob(ctx, ref)
	if err != nil {
		return nil, err
	}
	return verify(ref, where, data)
}

// getBlob reads the object under ref's key, unchecked.
func (s *S3) getBlob(ctx context.Context, ref string) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	h, err := parseRef(ref)
	if err != nil {
		return nil, "", err
	}
	key := s.key(h)
	data, err := s.read(ctx, key)
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return nil, "", fmt.Errorf("read %s: no object %s in %s: %w", ref, key, s.where, fs.ErrNotExist)
	}
	if err != nil {
		return nil, "", s.fail("read "+ref+" from "+key, err)
	}
	return data, "from " + key + " in " + s.where, nil
}

func (s *S3) read(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

// fail wraps err from the service with where the store is and what a
// person should check, so the message in a session's history or the
// worker's log can be acted on without reading this code.
func (s *S3) fail(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		// The caller gave up: nothing to check.
		return fmt.Errorf("%s in %s: %w", op, s.where, err)
	}
	return fmt.Errorf("%s in %s: %w (%s)", op, s.where, err, s.hint(err))
}

// hint is what to check for err, by the service's error code.
func (s *S3) hint(err error) string {
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchBucket:
		return fmt.Sprintf("check that bucket %q exists", s.cfg.Bucket)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
		return "check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or the AWS_PROFILE profile in ~/.aws/credentials) and that they may read and write the bucket"
	case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException", "PermanentRedirect":
		return "check the region (?region=) and the endpoint (?endpoint=)"
	case "":
		// No answer from the service: the network, TLS or the address.
		return "check that the endpoint is reachable and speaks S3 (?endpoint=host:port; ?insecure=1 if it serves plain HTTP)"
	default:
		return "check the endpoint, the bucket and the credentials"
	}
}
