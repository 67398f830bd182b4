package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/longrun/longrun/checkout"
)

// controlRefusal is why apply must not bring a session's diff over: it
// touches control files (.longrun/, .git/, AGENTS.md: what decides what
// later sessions may do) the person did not name with --include-control.
// A session's branch never holds them (its checkout's close leaves them
// out), but a diff of a session still running, or a branch someone
// committed to, may; they reach the person's checkout only by name. nil
// when the diff is fine to apply.
func controlRefusal(ctx context.Context, id, patch string, include []string) error {
	paths, err := checkout.PatchPaths(ctx, patch)
	if err != nil {
		return fmt.Errorf("the changes of session %s: %w", id, err)
	}
	var unnamed []string
	for _, p := range checkout.ControlPaths(paths) {
		if !named(p, include) {
			unnamed = append(unnamed, p)
		}
	}
	if len(unnamed) == 0 {
		return nil
	}
	flags := make([]string, len(unnamed))
	for i, p := range unnamed {
		flags[i] = "--include-control " + shellQuote(p)
	}
	return exitError{exitFailure, fmt.Sprintf("the changes of session %s touch control files, which decide what later sessions may do: %s. Nothing was changed. Read them (%s diff %s), and if you want them, name each: %s apply %s %s",
		id, strings.Join(unnamed, ", "), progName, shellQuote(id), progName, strings.Join(flags, " "), shellQuote(id))}
}

// named reports whether p is one of include, or lies in a directory one
// of them names.
func named(p string, include []string) bool {
	for _, in := range include {
		in = strings.TrimSuffix(path.Clean(strings.TrimPrefix(in, "./")), "/")
		if p == in || strings.HasPrefix(p, in+"/") {
			return true
		}
	}
	return false
}

// applyCopy brings the changes of a session that worked in a copy (its
// directory was not a git repository) back to the directory: the files it
// changed are copied over, refusing when one of them changed there since
// the copy was made.
func (a *app) applyCopy(ctx context.Context, id string, in checkout.Info, dir string) (string, error) {
	applied, err := checkout.ApplyCopy(ctx, in, dir)
	if err != nil {
		if errors.Is(err, checkout.ErrConflict) {
			return "", exitError{exitFailure, fmt.Sprintf("the changes of session %s do not apply to %s as it is now; nothing was changed.\n%v\nCompare them yourself: %s diff %s, and the session's copy is %s",
				id, dir, err, progName, shellQuote(id), in.Dir)}
		}
		return "", err
	}
	return fmt.Sprintf("applied the changes of session %s to %s: %d files written or removed (%s)", id, dir, len(applied), strings.Join(applied, ", ")), nil
}
