package checkout

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What git add would record for a changed file besides its bytes and
// whether it would take it at all: the settings, the attributes and the
// ignore rules, each read by one git process for all the paths.

// checkpointConfig reads the settings that change what git add records.
func checkpointConfig(ctx context.Context, dir string) (map[string]string, error) {
	out, code, err := gitCode(ctx, dir, nil, "", "config", "-z", "--get-regexp",
		`^(core\.(autocrlf|safecrlf|filemode|symlinks|ignorecase|precomposeunicode|sparsecheckout|sharedrepository)|extensions\.objectformat)$`)
	if code == 1 {
		return map[string]string{}, nil // none set
	}
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for _, kv := range strings.Split(out, "\x00") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "\n")
		if !ok {
			v = "true" // a key with no value is a true boolean
		}
		cfg[k] = v // the last one wins, as in git
	}
	return cfg, nil
}

// configBool is git's reading of a boolean setting; def when unset, and
// when unreadable (git would refuse to run; the full look then fails
// the same way).
func configBool(cfg map[string]string, key string, def bool) bool {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1", "":
		return true
	case "false", "no", "off", "0":
		return false
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n != 0
	}
	return def
}

// convertAttrs are the attributes that make git add store something other
// than the file's bytes.
var convertAttrs = []string{"text", "eol", "crlf", "filter", "ident", "working-tree-encoding"}

// checkAttr reads convertAttrs for files. The index it would read (all
// of it, for .gitattributes files missing from the working tree) is none:
// the checkpoints' index holds no .gitattributes the files lack, since a
// change to one is always a full look.
func checkAttr(ctx context.Context, dir string, dirs repoDirs, files []string) (map[string]map[string]string, error) {
	res := map[string]map[string]string{}
	if len(files) == 0 {
		return res, nil
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dirs.git, "longrun-no-index")}
	args := append([]string{"check-attr", "-z", "--stdin"}, convertAttrs...)
	out, _, err := gitCode(ctx, dir, env, strings.Join(files, "\x00")+"\x00", args...)
	if err != nil {
		return nil, err
	}
	f := strings.Split(out, "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		if res[f[i]] == nil {
			res[f[i]] = map[string]string{}
		}
		res[f[i]][f[i+1]] = f[i+2]
	}
	return res, nil
}

// checkIgnore gives which of paths the ignore rules exclude, as they
// would for a file not in the index.
func checkIgnore(ctx context.Context, dir string, paths []string) (map[string]bool, error) {
	res := map[string]bool{}
	if len(paths) == 0 {
		return res, nil
	}
	out, code, err := gitCode(ctx, dir, nil, strings.Join(paths, "\x00")+"\x00", "check-ignore", "--no-index", "-z", "--stdin")
	if code == 1 {
		return res, nil // none ignored
	}
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			res[p] = true
		}
	}
	return res, nil
}

// readChanged reads the changed file rel (slash-separated) beneath the
// checkout dir through os.Root: nothing outside the checkout is read,
// whatever a directory on its way became after look checked it.
func readChanged(dir, rel string) ([]byte, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(filepath.FromSlash(rel))
}

// writeBlobs writes the blobs of the files and links in ch, as they are
// (usable says whether git add would convert them): a file's bytes, a
// link's target.
func writeBlobs(objects looseObjects, dir string, ch []changed) error {
	for i, c := range ch {
		var body []byte
		switch c.kind {
		case kindGone:
			continue
		case kindLink:
			body = []byte(c.target)
		default:
			b, err := readChanged(dir, c.path)
			if err != nil {
				return errFullLook // changed meanwhile: let git add look
			}
			body = b
		}
		oid, err := objects.write("blob", body)
		if err != nil {
			return err
		}
		ch[i].blob = oid
	}
	return nil
}

// usable says whether the blobs hashed as they are are what git add
// would store, and whether to trust the executable bit: no conversion
// configured (core.autocrlf), none by attribute unless it has nothing to
// convert (text, eol and crlf only turn CRLF into LF), symbolic links
// and a case-sensitive file system as git sees them, SHA-1 objects.
func usable(cfg map[string]string, attrs map[string]map[string]string, dir string, files []string) (bool, error) {
	if v := strings.ToLower(cfg["core.autocrlf"]); v != "" && v != "false" {
		return false, errFullLook
	}
	if f := cfg["extensions.objectformat"]; f != "" && f != "sha1" {
		return false, errFullLook // the objects written are SHA-1's
	}
	switch strings.ToLower(cfg["core.sharedrepository"]) {
	case "", "false", "umask", "0", "no", "off":
	default:
		return false, errFullLook // the objects written would need the group's permissions
	}
	if !configBool(cfg, "core.symlinks", true) || configBool(cfg, "core.ignorecase", false) ||
		configBool(cfg, "core.precomposeunicode", false) || configBool(cfg, "core.sparsecheckout", false) {
		return false, errFullLook
	}
	safeCRLF := strings.ToLower(cfg["core.safecrlf"])
	for _, f := range files {
		text := false
		for k, v := range attrs[f] {
			if v == "unspecified" || v == "unset" {
				continue
			}
			switch k {
			case "text", "eol", "crlf":
				text = true
			default:
				return false, errFullLook
			}
		}
		if !text {
			continue
		}
		if safeCRLF != "" && safeCRLF != "false" && safeCRLF != "warn" {
			return false, errFullLook
		}
		b, err := readChanged(dir, f)
		if err != nil || bytes.IndexByte(b, '\r') >= 0 {
			return false, errFullLook
		}
	}
	return configBool(cfg, "core.filemode", true), nil
}
