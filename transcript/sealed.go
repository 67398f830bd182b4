package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/longrun/longrun/codec"
)

// Sealer encrypts blobs at rest; *codec.Keys is one. Seal encrypts with
// the current key and names it, Open decrypts under the key named.
type Sealer interface {
	Seal(plain, ad []byte) (keyID string, sealed []byte, err error)
	Open(keyID string, sealed, ad []byte) ([]byte, error)
}

var (
	_ blobStore = (*Dir)(nil)
	_ blobStore = (*S3)(nil)
)

// blobStore is a backend that stores bytes under a reference it is given,
// which lets Sealed keep the reference of the plaintext while the bytes
// stored are ciphertext.
type blobStore interface {
	putBlob(ctx context.Context, ref string, blob []byte) error
	getBlob(ctx context.Context, ref string) ([]byte, string, error)
}

// sealedMagic starts every encrypted blob; a blob without it was written
// before encryption was turned on and is read as plaintext.
const sealedMagic = "longrun-sealed-v1\x00"

// Sealed is a Store that encrypts what it stores (AES-256-GCM through a
// Sealer) under the reference of the plaintext, so references in
// histories, deduplication and chains are the same with or without
// encryption. Each blob is the magic, the key id's length and the key id,
// then nonce and ciphertext; the reference is authenticated with the
// ciphertext, so a blob moved under another reference does not decrypt.
// Get still checks the decrypted content against its reference, so
// damage is ErrCorrupt as in a plain store.
type Sealed struct {
	store  blobStore
	sealer Sealer
}

// Seal wraps s (a *Dir or *S3, as Open returns) so its blobs are
// encrypted at rest.
func Seal(s Store, sealer Sealer) (*Sealed, error) {
	bs, ok := s.(blobStore)
	if !ok {
		return nil, fmt.Errorf("transcript store %T cannot be encrypted", s)
	}
	return &Sealed{store: bs, sealer: sealer}, nil
}

// Put encrypts data with the current key and stores it under Ref(data).
// A blob of the same size already there (the same content under a key id
// of the same length) is kept, as in a plain store.
func (s *Sealed) Put(ctx context.Context, data []byte) (string, error) {
	ref := Ref(data)
	id, sealed, err := s.sealer.Seal(data, []byte(ref))
	if err != nil {
		return "", fmt.Errorf("store %s: %w", ref, err)
	}
	if len(id) > 255 {
		return "", fmt.Errorf("store %s: key id of %d bytes is too long", ref, len(id))
	}
	blob := make([]byte, 0, len(sealedMagic)+1+len(id)+len(sealed))
	blob = append(blob, sealedMagic...)
	blob = append(blob, byte(len(id)))
	blob = append(blob, id...)
	blob = append(blob, sealed...)
	if err := s.store.putBlob(ctx, ref, blob); err != nil {
		return "", err
	}
	return ref, nil
}

// Get reads ref, decrypts it under the key it names (a plaintext blob
// from before encryption is read as it is) and checks it against ref.
func (s *Sealed) Get(ctx context.Context, ref string) ([]byte, error) {
	blob, where, err := s.store.getBlob(ctx, ref)
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(blob, []byte(sealedMagic))
	if !ok {
		return verify(ref, where, blob)
	}
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return nil, fmt.Errorf("read %s %s: %w: encrypted blob cut short", ref, where, ErrCorrupt)
	}
	id := string(rest[1 : 1+int(rest[0])])
	plain, err := s.sealer.Open(id, rest[1+int(rest[0]):], []byte(ref))
	if errors.Is(err, codec.ErrDecrypt) {
		return nil, fmt.Errorf("read %s %s: %w: %w", ref, where, ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", ref, where, err)
	}
	return verify(ref, where, plain)
}
