//go:build linux

package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// raceOps is how many tool calls TestSymlinkSwapRace makes in all.
const raceOps = 10000

// TestSymlinkSwapRace (issue 15, must-show 3): while a goroutine keeps
// swapping the directory d inside the workspace with a symlink to a
// directory outside it, read, write, edit, apply_patch, list, grep and glob
// run 10,000 times in all against paths through d. Afterwards no result
// holds a byte of the outside files (each carries a canary) and the
// outside directory is byte for byte what it was, with no new file. With
// the old resolve-then-open code a write lands outside within a few
// hundred calls.
func TestSymlinkSwapRace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	canary := "CANARY-" + hex.EncodeToString(rnd[:])
	for dir, content := range map[string]string{root: "inside\n", outside: "inside " + canary + "\n"} {
		d := filepath.Join(dir, "d")
		if dir == outside {
			d = dir
		}
		require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "f.txt"), []byte(content), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "sub", "g.txt"), []byte(content), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "p.txt"), []byte(content), 0o644))
	}
	// Two links, so both an absolute and a relative symlink are tried.
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link-abs")))
	require.NoError(t, os.Symlink("../outside", filepath.Join(root, "link-rel")))
	before := snapshotTree(t, outside)
	ws, err := NewWorkspace(root)
	require.NoError(t, err)

	var swaps atomic.Int64
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		d := filepath.Join(root, "d")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			link := filepath.Join(root, "link-abs")
			if i%2 == 1 {
				link = filepath.Join(root, "link-rel")
			}
			// d becomes the symlink out and back, atomically each time, so
			// it always exists (a write never recreates it as a directory).
			for range 2 {
				if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
					panic(fmt.Sprintf("swap %s and %s: %v", d, link, err))
				}
				runtime.Gosched()
			}
			swaps.Add(1)
		}
	}()

	type call struct {
		tool Tool
		args any
	}
	calls := []func(i int) call{
		func(int) call { return call{NewRead(), ReadParams{Path: "d/f.txt"}} },
		func(int) call { return call{NewWrite(), WriteParams{Path: "d/f.txt", Content: "inside\n"}} },
		func(i int) call {
			return call{NewWrite(), WriteParams{Path: fmt.Sprintf("d/sub/new-%d.txt", i%3), Content: "new\n"}}
		},
		func(int) call {
			return call{NewEdit(), EditParams{Path: "d/f.txt", OldString: "inside", NewString: "inside2"}}
		},
		func(int) call {
			return call{NewEdit(), EditParams{Path: "d/f.txt", OldString: "inside2", NewString: "inside"}}
		},
		func(int) call {
			return call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: d/p.txt\n-inside\n+inside\n+more\n*** End Patch"}}
		},
		func(int) call {
			return call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: d/p.txt\n-inside\n-more\n+inside\n*** End Patch"}}
		},
		func(i int) call {
			return call{NewApplyPatch(), PatchParams{Patch: fmt.Sprintf("*** Begin Patch\n*** Add File: d/sub/q-%d.txt\n+q\n*** End Patch", i%3)}}
		},
		func(int) call { return call{NewList(), ListParams{Path: "d"}} },
		func(int) call { return call{NewGrep(), GrepParams{Pattern: "inside|CANARY", Path: "d"}} },
		func(int) call { return call{NewGrep(), GrepParams{Pattern: "inside|CANARY", Path: "d/f.txt"}} },
		func(int) call { return call{NewGlob(), GlobParams{Pattern: "**/*.txt", Path: "d"}} },
		func(int) call { return call{NewRead(), ReadParams{Path: "d/sub"}} },
	}

	var (
		next, done, refused, goErrs atomic.Int64
		mu                          sync.Mutex
		leaks                       []string
		outcomes                    = map[string]int{} // tool and outcome -> calls
	)
	workers := max(2, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= raceOps {
					return
				}
				c := calls[i%len(calls)](i)
				raw, err := json.Marshal(c.args)
				if err != nil {
					panic(err)
				}
				res, err := c.tool.Run(context.Background(), Env{Workspace: ws}, raw)
				done.Add(1)
				if res.IsError {
					refused.Add(1)
				}
				text := res.Content
				if err != nil {
					text += err.Error()
				}
				outcome := "ok"
				switch {
				case err != nil:
					outcome = "go error: " + err.Error()
					goErrs.Add(1)
				case strings.Contains(text, "outside the workspace"):
					outcome = "outside"
				case res.IsError:
					outcome = "error result"
					if testing.Verbose() {
						outcome += ": " + strings.SplitN(text, "\n", 2)[0]
					}
				}
				mu.Lock()
				outcomes[c.tool.Spec().Name+" "+outcome]++
				if strings.Contains(text, canary) {
					leaks = append(leaks, fmt.Sprintf("call %d %s %s: %s", i, c.tool.Spec().Name, raw, text))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-swapped
	t.Logf("%d tool calls (%d error results) against %d directory/symlink swaps; outcomes: %v", done.Load(), refused.Load(), swaps.Load(), outcomes)
	require.EqualValues(t, raceOps, done.Load())
	if len(leaks) > 0 {
		t.Errorf("%d results held the outside files' canary; the first:\n%s", len(leaks), strings.Join(leaks[:min(3, len(leaks))], "\n"))
	}
	after := snapshotTree(t, outside)
	var changed []string
	for _, tree := range []map[string]string{before, after} {
		for p := range tree {
			if before[p] != after[p] && !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
		}
	}
	slices.Sort(changed)
	if len(changed) > 0 {
		t.Errorf("%d paths outside the workspace changed or appeared, e.g. %q", len(changed), changed[:min(5, len(changed))])
	}
	require.Zero(t, goErrs.Load(), "a swap must be an error result for the model, not a broken system")
	require.Positive(t, swaps.Load())
}
