package main

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"go.temporal.io/sdk/contrib/envconfig"
)

// hideCandidates are the paths the worker's flags (their values as parsed,
// defaults included) and its LONGRUN_* and TEMPORAL_* variables name: a
// value that is an absolute path, a file:// URL, or a list of either
// (comma or PATH-list separated). Relative flag values are taken from the
// worker's directory, as the worker reads them. What exists is decided
// later (hidePaths), once the workspace is known.
func hideCandidates(fs *flag.FlagSet, environ []string) []string {
	var out []string
	add := func(value string, relative bool) {
		for _, part := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == filepath.ListSeparator }) {
			part = strings.TrimSpace(part)
			if rest, ok := strings.CutPrefix(part, "file://"); ok {
				part = rest
			}
			if part == "" || strings.Contains(part, "://") {
				continue
			}
			if !filepath.IsAbs(part) {
				if !relative {
					continue
				}
				abs, err := filepath.Abs(part)
				if err != nil {
					continue
				}
				part = abs
			}
			out = append(out, filepath.Clean(part))
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "workspace" {
			add(f.Value.String(), true)
		}
	})
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(name, "LONGRUN_") || strings.HasPrefix(name, "TEMPORAL_")) && name != "LONGRUN_WORKSPACE" {
			add(value, false)
		}
	}
	return out
}

// files are the Temporal client's files: its config file (named or the
// default) and the TLS certificate, key and CA files its profile names.
func (c *temporalConfig) files() []string {
	out := []string{c.ConfigFile, envconfig.DefaultConfigFilePath()}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
		ConfigFilePath: c.ConfigFile, ConfigFileProfile: c.Profile, EnvLookup: c.env,
	})
	if err == nil && prof.TLS != nil {
		out = append(out, prof.TLS.ClientCertPath, prof.TLS.ClientKeyPath, prof.TLS.ServerCACertPath)
	}
	return out
}

// systemDirs are never hidden, whatever a flag names: commands need them.
var systemDirs = []string{"/", "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/var", "/home", "/root", "/tmp", "/dev", "/proc", "/sys", "/run", "/srv", "/mnt", "/media", "/nix", "/snap"}

// hidePaths keeps of candidates what exists and may be hidden, as real
// paths: not the workspace root or a directory holding it (its sessions
// work there), not a system directory or one holding GOROOT or a PATH
// entry, not a program (an executable file: LONGRUN_GOPLS names one a
// sandbox runs; a program is not a secret).
func hidePaths(candidates []string, workspaceRoot string) []string {
	//lint:ignore SA1019 the root this worker was built with is the one to keep visible: the go command a session runs is usually that toolchain; a moved binary only keeps one more path unhidden.
	need := []string{realOrClean(workspaceRoot), realOrClean(runtime.GOROOT())}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			need = append(need, realOrClean(d))
		}
	}
	var out []string
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || slices.Contains(systemDirs, real) || slices.Contains(out, real) {
			continue
		}
		if !fi.IsDir() && fi.Mode()&0o111 != 0 {
			continue
		}
		if slices.ContainsFunc(need, func(n string) bool { return n != "" && within(n, real) }) {
			continue
		}
		out = append(out, real)
	}
	return out
}
