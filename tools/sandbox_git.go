package tools

import "github.com/longrun/longrun/gitsafe"

// The sandbox's git neutralisation lives in package gitsafe, shared with
// the worker's own git on the host (package checkout), so the two cannot
// drift apart; these names keep the sandbox's code and tests as they were.

// gitConfigMaxBytes is the largest git configuration file read.
const gitConfigMaxBytes = gitsafe.ConfigMaxBytes

// gitExternalDiff replaces an external diff program the repository names.
const gitExternalDiff = gitsafe.ExternalDiff

// gitNeutralEnv returns variables that keep git, started anywhere under
// dir, from running a program the repository's configuration names
// (gitsafe.NeutralEnv).
func gitNeutralEnv(dir string) ([]string, error) { return gitsafe.NeutralEnv(dir) }

// readBounded reads at most limit bytes of a regular file, without
// following a final symlink or blocking on a FIFO (gitsafe.ReadBounded).
func readBounded(name string, limit int64) ([]byte, error) { return gitsafe.ReadBounded(name, limit) }

// cutGitdir reads the "gitdir: PATH" of a .git file (gitsafe.CutGitdir).
func cutGitdir(s string) (string, bool) { return gitsafe.CutGitdir(s) }
