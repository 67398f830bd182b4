package transcript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/durable"
)

func TestDirRoundTripAndDedup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := NewDir(filepath.Join(t.TempDir(), "transcript"))
	require.NoError(t, err)
	ref, err := d.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", ref)
	got, err := d.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))

	path := filepath.Join(d.Path(), "2c", strings.TrimPrefix(ref, "sha256:"))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), di.Mode().Perm())

	// A second Put of the same content writes nothing: the file keeps its
	// modification time and no temporary file is left behind.
	before := fi.ModTime()
	require.NoError(t, os.Chtimes(path, before.Add(-1e9), before.Add(-1e9)))
	again, err := d.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, ref, again)
	fi, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, before.Add(-1e9), fi.ModTime())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

func TestDirDetectsCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	ref, err := d.Put(ctx, []byte("the original text"))
	require.NoError(t, err)
	path := filepath.Join(d.Path(), strings.TrimPrefix(ref, "sha256:")[:2], strings.TrimPrefix(ref, "sha256:"))
	require.NoError(t, os.WriteFile(path, []byte("the damaged! text"), 0o644))
	_, err = d.Get(ctx, ref)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, ref)
	require.ErrorContains(t, err, path)

	// Put of the same content repairs a damaged file of another size.
	require.NoError(t, os.WriteFile(path, []byte("cut"), 0o644))
	_, err = d.Put(ctx, []byte("the original text"))
	require.NoError(t, err)
	got, err := d.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "the original text", string(got))
}

func TestDirRefusesBadRefs(t *testing.T) {
	t.Parallel()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	for _, ref := range []string{
		"", "abc", "sha256:", "md5:2cf24dba5fb0a30e26e83b2ac5b9e29e",
		"sha256:../../../../../../etc/passwd",
		"sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824",
		"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b982",
	} {
		_, err := d.Get(context.Background(), ref)
		require.ErrorIs(t, err, ErrBadRef, ref)
	}
	_, err = d.Get(context.Background(), Ref([]byte("never stored")))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, Ref([]byte("never stored")))
}

// TestPutSyncsTheNamesItMakes: a blob's name (and a new fan-out
// directory's) is synced before Put returns its reference, which goes
// into durable history at once; a sync that fails fails the Put, and the
// retry syncs the name again, while an old blob's name is not synced.
func TestPutSyncsTheNamesItMakes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := NewDir(filepath.Join(t.TempDir(), "transcript"))
	require.NoError(t, err)
	var synced []string
	var fail error
	d.w.SyncDir = func(dir string) error {
		synced = append(synced, dir)
		if fail != nil {
			return fail
		}
		return durable.SyncDir(dir)
	}
	ref, err := d.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	fanout := filepath.Join(d.Path(), "2c")
	require.Equal(t, []string{d.Path(), fanout}, synced, "the new fan-out directory's name, then the blob's")

	// A second blob in the same fan-out directory: only its own name.
	var same []byte
	for i := 0; same == nil; i++ {
		if b := fmt.Appendf(nil, "blob %d", i); strings.HasPrefix(Ref(b), "sha256:2c") {
			same = b
		}
	}
	synced = nil
	_, err = d.Put(ctx, same)
	require.NoError(t, err)
	require.Equal(t, []string{fanout}, synced)

	// A sync that fails fails the Put, saying where; the retry finds the
	// blob written and syncs its name again.
	synced, fail = nil, errors.New("injected: no space left on device")
	_, err = d.Put(ctx, []byte("a blob whose name did not last"))
	require.ErrorContains(t, err, "injected")
	require.Len(t, synced, 1)
	synced, fail = nil, nil
	again, err := d.Put(ctx, []byte("a blob whose name did not last"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Dir(d.file(strings.TrimPrefix(again, "sha256:")))}, synced)

	// A blob written long ago: its name has lasted, nothing to sync.
	path := d.file(strings.TrimPrefix(ref, "sha256:"))
	old := time.Now().Add(-2 * uncommittedAge)
	require.NoError(t, os.Chtimes(path, old, old))
	synced = nil
	_, err = d.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Empty(t, synced)

	// The store's directory removed under the worker: made again, and the
	// new fan-out directory's name synced in it.
	require.NoError(t, os.RemoveAll(d.Path()))
	synced = nil
	ref, err = d.Put(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, []string{d.Path(), fanout}, synced)
	got, err := d.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
}
