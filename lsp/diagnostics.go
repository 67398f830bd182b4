package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Bounds of a diagnostics report: the model needs the first errors, not
// a thousand cascading ones.
const (
	MaxPerFile = 20
	MaxTotal   = 50
)

// AfterEdit tells the servers of root that files (absolute) changed and
// reports their diagnostics, waiting at most the configured cap for them:
// a slow or broken server makes the report say the diagnostics are not
// available, never holds the edit's result longer. Files no server serves
// are left out; "" when there are none.
func (m *Manager) AfterEdit(ctx context.Context, root string, files []string) string {
	deadline := time.Now().Add(m.cfg.wait)
	byServer := map[string][]string{}
	for _, f := range files {
		if s := m.ServerFor(root, f); s != "" {
			byServer[s] = append(byServer[s], f)
		}
	}
	names := make([]string, 0, len(byServer))
	for n := range byServer {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, m.diagnose(ctx, root, n, byServer[n], deadline))
	}
	return strings.Join(parts, "\n")
}

// diagnose syncs files with server n and reports what it says of them.
func (m *Manager) diagnose(ctx context.Context, root, n string, files []string, deadline time.Time) string {
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rels := relAll(root, files)
	c, err := m.Client(cctx, root, n)
	if err != nil {
		return fmt.Sprintf("Diagnostics not available for %s: %s did not answer in time (%v); the lsp_diagnostics tool asks again.", strings.Join(rels, ", "), n, err)
	}
	since := c.seqNow()
	want := map[string]int{}
	var kept []string
	for _, f := range files {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			_, _, _ = c.Sync(cctx, f) // deleted: closed if it was open, nothing to report
			continue
		}
		v, _, err := c.Sync(cctx, f)
		if err != nil {
			return fmt.Sprintf("Diagnostics not available for %s: %v", strings.Join(rels, ", "), err)
		}
		want[f] = v
		kept = append(kept, f)
	}
	if len(want) == 0 {
		return ""
	}
	rels = relAll(root, kept)
	diags, missing := c.WaitDiagnostics(cctx, want, since, deadline)
	out := Format(root, diags, SeverityWarning)
	if others := insideRoot(root, c.ErrorsSince(since, want)); len(others) > 0 {
		// Published by the time the changed files' were: what the edit
		// broke elsewhere, errors only.
		elsewhere := "errors in other files now:\n" + Format(root, others, SeverityError)
		if out == "" {
			out = fmt.Sprintf("%s reports no errors or warnings in %s; %s", n, strings.Join(rels, ", "), elsewhere)
			rels = nil
		} else {
			out += "\n" + elsewhere
		}
	}
	if len(missing) > 0 {
		note := fmt.Sprintf("Diagnostics not available for %s: %s did not report within %s; the lsp_diagnostics tool asks again.",
			strings.Join(relAll(root, missing), ", "), n, m.cfg.wait)
		if out == "" {
			return note
		}
		return out + "\n" + note
	}
	switch {
	case out == "":
		return fmt.Sprintf("%s reports no errors or warnings in %s.", n, strings.Join(rels, ", "))
	case rels == nil:
		return out
	}
	return fmt.Sprintf("%s diagnostics:\n%s", n, out)
}

func relAll(root string, files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, Rel(root, f))
	}
	sort.Strings(out)
	return out
}

// Rel is file relative to root, slash-separated, as the model names it.
func Rel(root, file string) string {
	if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return file
}

// Format lays diagnostics out one a line, "path:line:col: severity:
// message [source]", errors first, then by file and line; duplicates
// (the same message at the same place) once; at most MaxPerFile per file
// and MaxTotal in all, saying how many were left out. Only severities up
// to worst (SeverityWarning: errors and warnings) are shown.
func Format(root string, diags map[string][]Diagnostic, worst int) string {
	type line struct {
		file string
		sev  int
		d    Diagnostic
		at   Point
	}
	var all []line
	texts := map[string]string{}
	for f, ds := range diags {
		// Columns are given in characters, as the tools take them; the
		// protocol counts UTF-16 units.
		if raw, err := os.ReadFile(f); err == nil {
			texts[f] = string(raw)
		}
		seen := map[string]bool{}
		for _, d := range ds {
			sev := d.Severity
			if sev == 0 {
				sev = SeverityError
			}
			if sev > worst {
				continue
			}
			k := fmt.Sprintf("%d:%d:%d:%s", sev, d.Range.Start.Line, d.Range.Start.Character, d.Message)
			if seen[k] {
				continue
			}
			seen[k] = true
			all = append(all, line{Rel(root, f), sev, d, ToPoint(texts[f], d.Range.Start)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.sev != b.sev:
			return a.sev < b.sev
		case a.file != b.file:
			return a.file < b.file
		case a.d.Range.Start.Line != b.d.Range.Start.Line:
			return a.d.Range.Start.Line < b.d.Range.Start.Line
		}
		return a.d.Range.Start.Character < b.d.Range.Start.Character
	})
	var sb strings.Builder
	perFile := map[string]int{}
	shown := 0
	for _, l := range all {
		if shown >= MaxTotal || perFile[l.file] >= MaxPerFile {
			continue
		}
		perFile[l.file]++
		shown++
		src := ""
		if l.d.Source != "" {
			src = " [" + l.d.Source + "]"
		}
		fmt.Fprintf(&sb, "%s:%d:%d: %s: %s%s\n", l.file, l.at.Line, l.at.Column, severityName(l.sev), oneLine(l.d.Message), src)
	}
	if left := len(all) - shown; left > 0 {
		fmt.Fprintf(&sb, "(%d more not shown)\n", left)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// oneLine puts a message of several lines on one: pyright indents its
// details on lines of their own ("Cannot access attribute ...\n  Attribute
// "x" is unknown"), which become "; "-separated.
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

func severityName(s int) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	}
	return "hint"
}

// insideRoot keeps the files under root: a server may report on files of
// the module cache or the standard library, which are not the session's.
func insideRoot(root string, diags map[string][]Diagnostic) map[string][]Diagnostic {
	for f := range diags {
		if r, err := filepath.Rel(root, f); err != nil || strings.HasPrefix(r, "..") {
			delete(diags, f)
		}
	}
	return diags
}
