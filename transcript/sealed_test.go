package transcript

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/codec"
)

func keyRing(t *testing.T, ids ...string) *codec.Keys {
	t.Helper()
	var raw [][]byte
	for _, id := range ids {
		raw = append(raw, bytes.Repeat([]byte{id[0]}, codec.KeySize))
	}
	k, err := codec.NewKeys(ids, raw)
	require.NoError(t, err)
	return k
}

func blobPath(d *Dir, ref string) string {
	h := strings.TrimPrefix(ref, refPrefix)
	return filepath.Join(d.Path(), h[:2], h)
}

func TestSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "MARKER-SECRET-sealed"
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)

	// A blob written before encryption was turned on stays readable.
	oldRef, err := d.Put(ctx, []byte("written in plain text"))
	require.NoError(t, err)

	a, err := Seal(d, keyRing(t, "a"))
	require.NoError(t, err)
	ref, err := a.Put(ctx, []byte("the file says "+secret))
	require.NoError(t, err)
	require.Equal(t, Ref([]byte("the file says "+secret)), ref, "the reference is the plaintext's")
	raw, err := os.ReadFile(blobPath(d, ref))
	require.NoError(t, err)
	require.NotContains(t, string(raw), secret, "plaintext at rest")
	got, err := a.Get(ctx, ref)
	require.NoError(t, err)
	require.Contains(t, string(got), secret)
	got, err = a.Get(ctx, oldRef)
	require.NoError(t, err)
	require.Equal(t, "written in plain text", string(got))

	// The same content again is deduplicated: nothing rewritten.
	again, err := a.Put(ctx, []byte("the file says "+secret))
	require.NoError(t, err)
	require.Equal(t, ref, again)
	raw2, err := os.ReadFile(blobPath(d, ref))
	require.NoError(t, err)
	require.Equal(t, raw, raw2)

	// Rotation: b encrypts, a still decrypts; a ring without a says so.
	ba, err := Seal(d, keyRing(t, "b", "a"))
	require.NoError(t, err)
	got, err = ba.Get(ctx, ref)
	require.NoError(t, err)
	require.Contains(t, string(got), secret)
	newRef, err := ba.Put(ctx, []byte("after rotation"))
	require.NoError(t, err)
	onlyB, err := Seal(d, keyRing(t, "b"))
	require.NoError(t, err)
	_, err = onlyB.Get(ctx, newRef)
	require.NoError(t, err)
	_, err = onlyB.Get(ctx, ref)
	require.ErrorIs(t, err, codec.ErrUnknownKey)
	require.ErrorContains(t, err, `"a"`)

	// The plain store does not hand out ciphertext as content.
	_, err = d.Get(ctx, ref)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestSealedDetectsCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	s, err := Seal(d, keyRing(t, "a"))
	require.NoError(t, err)
	ref, err := s.Put(ctx, []byte("the original text"))
	require.NoError(t, err)
	other, err := s.Put(ctx, []byte("another text"))
	require.NoError(t, err)
	path := blobPath(d, ref)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)

	for name, damaged := range map[string][]byte{
		"flipped byte":       append(append([]byte(nil), raw[:len(raw)-1]...), raw[len(raw)-1]^1),
		"cut short":          raw[:len(sealedMagic)+1],
		"another ref's blob": func() []byte { b, _ := os.ReadFile(blobPath(d, other)); return b }(),
		"plaintext swapped":  []byte("the damaged! text"),
	} {
		require.NoError(t, os.WriteFile(path, damaged, 0o644))
		_, err = s.Get(ctx, ref)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorContains(t, err, ref, name)
		require.ErrorContains(t, err, path, name)
	}

	// Put of the same content repairs a damaged blob of another size.
	require.NoError(t, os.WriteFile(path, []byte("cut"), 0o644))
	_, err = s.Put(ctx, []byte("the original text"))
	require.NoError(t, err)
	got, err := s.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "the original text", string(got))
}
