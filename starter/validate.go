package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/toolsearch"
	"github.com/longrun/longrun/workflows"
)

// checkSessionInput refuses, before anything is started, what the session
// would refuse half a second after it started (an unknown profile) or
// silently never match (a rule naming a tool that does not exist). The
// profile, approver and rules go through permission.New, the same check
// the session runs, so the two cannot disagree.
func checkSessionInput(in workflows.SessionInput) error {
	approver := in.Approval
	if approver == "" {
		approver = permission.ApproverPerson
	}
	if _, err := permission.New(permission.Config{
		Profile:  in.Profile,
		Approver: approver,
		Layers:   []permission.Layer{{Name: permission.LayerSession, Rules: in.Rules}},
	}); err != nil {
		if errors.Is(err, permission.ErrBadProfile) {
			return invalidInput("--profile %q is not a profile: use %s, %s or %s%s", in.Profile,
				permission.ProfileBuild, permission.ProfilePlan, permission.ProfileAuto,
				didYouMean(in.Profile, []string{permission.ProfileBuild, permission.ProfilePlan, permission.ProfileAuto}))
		}
		return invalidInput("%v", err)
	}
	known := knownTools()
	for _, r := range in.Rules {
		if toolNameOK(r.Tool, known) {
			continue
		}
		flag := "--allow"
		if r.Action == permission.Deny {
			flag = "--deny-rule"
		}
		given := r.Tool
		if r.Pattern != "" {
			given += ":" + r.Pattern
		}
		return invalidInput("%s %q: no tool is called %q%s (tools: %s; MCP tools are SERVER%sTOOL; * matches every tool)",
			flag, given, r.Tool, didYouMean(r.Tool, known), strings.Join(known, ", "), mcp.Separator)
	}
	return nil
}

// knownTools are the tool names a rule can name: the built-in tools, the
// ones the session answers itself, and the doom-loop check.
func knownTools() []string {
	// web_search is a built-in only on workers with a search provider.
	names := []string{workflows.TodoName, workflows.TaskName, toolsearch.SearchName, permission.DoomLoopTool, tools.WebSearchName}
	for _, t := range tools.Builtin(tools.DefaultConfig()) {
		names = append(names, t.Spec().Name)
	}
	sort.Strings(names)
	return names
}

// toolNameOK accepts a known name, a wildcard (which may match tools a
// worker adds), and an MCP tool's name, which only the worker can check.
func toolNameOK(name string, known []string) bool {
	if strings.ContainsAny(name, "*?") || strings.Contains(name, mcp.Separator) {
		return true
	}
	for _, k := range known {
		if k == name {
			return true
		}
	}
	return false
}

// didYouMean names the closest candidate when it is a likely typo (at most
// two edits away), as ", did you mean \"shell\"?".
func didYouMean(got string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(got), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(", did you mean %q?", best)
}

// editDistance is the optimal string alignment distance: Levenshtein's, with
// two neighbouring letters swapped counted as one edit, the commonest typo
// ("stauts" is one edit from "status", two from "start").
func editDistance(a, b string) int {
	s, u := []rune(a), []rune(b)
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(u)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(u); j++ {
			cost := 1
			if s[i-1] == u[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == u[j-2] && s[i-2] == u[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(u)]
}

// invalidInput is a start option the session would refuse: exit 2 with the
// reason alone (no usage screen burying it), and nothing started.
func invalidInput(format string, args ...any) error {
	return exitError{exitUsage, fmt.Sprintf("%s: %s; nothing was started", progName, fmt.Sprintf(format, args...))}
}
