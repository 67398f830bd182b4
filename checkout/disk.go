package checkout

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Use is the disk one checkout takes: its files, as the file system
// allocates them (a sparse or tiny file counts its blocks, not its
// length). The objects a checkout borrows from the person's repository
// (objects/info/alternates) are not counted here; its own are.
type Use struct {
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
	Files int    `json:"files"`
}

// DiskUse is what every checkout under stateDir takes, largest first,
// and their total. A checkout that vanishes while it is walked (a session
// ending) counts what was read of it.
func DiskUse(stateDir string) ([]Use, int64, error) {
	root := filepath.Join(stateDir, Dir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("checkouts' disk use: %w", err)
	}
	var (
		out   []Use
		total int64
	)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		u := Use{Name: e.Name(), Dir: filepath.Join(root, e.Name())}
		_ = filepath.WalkDir(u.Dir, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // gone meanwhile, or unreadable: count the rest
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			u.Bytes += allocated(info)
			if !d.IsDir() {
				u.Files++
			}
			return nil
		})
		out = append(out, u)
		total += u.Bytes
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out, total, nil
}

// TreeBytes estimates the disk a new checkout of base takes: the sizes of
// the files of base's tree (one git command, no file read).
func TreeBytes(ctx context.Context, workDir, base string) (int64, error) {
	ref := base
	if ref == "" {
		ref = "HEAD"
	}
	out, err := gitRaw(ctx, workDir, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", ref)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, rec := range strings.Split(out, "\x00") {
		// "<mode> <type> <object> <size>\t<path>"
		meta, _, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) == 4 {
			if s, err := strconv.ParseInt(f[3], 10, 64); err == nil {
				n += s
			}
		}
	}
	return n, nil
}

// Size formats a number of bytes for a person: 1.5 GiB.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ParseSize reads a size a person writes: a number of bytes, or one with
// a K, M, G or T suffix (powers of 1024; "KiB", "GB" and the like read the
// same).
func ParseSize(v string) (int64, error) {
	s := strings.TrimSpace(strings.ToUpper(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if s != "" {
		if i := strings.IndexByte("KMGT", s[len(s)-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a size such as 20G, 500M or a number of bytes", v)
	}
	return int64(n * float64(mult)), nil
}
