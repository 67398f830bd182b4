package shellcmd

// gitGlobal are the only git options before the subcommand that keep a
// command read-only. Left out, so asking: -C, --git-dir, --work-tree (another
// repository, possibly outside the workspace), --exec-path (runs programs
// from a directory), -c and --config-env (configuration can run programs:
// core.pager, core.fsmonitor, diff.external), --namespace, and anything else.
var gitGlobal = map[string]bool{"--no-pager": true, "-P": true, "--no-optional-locks": true}

// gitDiffOpts are the diff options of git diff, log and show that only change
// what is printed. Left out: --output (writes a file), --ext-diff and
// --textconv (run programs the repository configures), -O (an order file),
// --no-index (compares paths outside the repository), --submodule (runs git
// in submodules), --show-signature (runs the configured gpg program).
var gitDiffLongs = []string{
	"stat=?", "numstat", "shortstat", "name-only", "name-status", "patch", "no-patch",
	"cached", "staged", "no-ext-diff", "no-textconv", "color=?", "no-color", "word-diff=?",
	"word-diff-regex=", "color-words=?", "color-moved=?", "no-color-moved", "ignore-all-space",
	"ignore-space-change", "ignore-space-at-eol", "ignore-blank-lines", "ignore-cr-at-eol",
	"summary", "raw", "full-index", "binary", "abbrev=?", "no-abbrev", "relative=?", "no-relative",
	"check", "exit-code", "quiet", "diff-filter=", "find-renames=?", "find-copies=?",
	"find-copies-harder", "no-renames", "minimal", "patience", "histogram", "diff-algorithm=",
	"text", "function-context", "dirstat=?", "compact-summary", "patch-with-stat",
	"patch-with-raw", "unified=", "inter-hunk-context=", "stat-width=", "stat-name-width=",
	"stat-count=", "stat-graph-width=", "src-prefix=", "dst-prefix=", "no-prefix",
	"default-prefix", "ignore-submodules=?", "merge-base", "base", "ours", "theirs", "indent-heuristic",
	"no-indent-heuristic", "irreversible-delete", "pickaxe-all", "pickaxe-regex", "null",
}

// gitLogLongs are the options git log and show add: revision walking and
// formatting.
var gitLogLongs = []string{
	"oneline", "graph", "decorate=?", "no-decorate", "all", "branches=?", "tags=?", "remotes=?",
	"format=", "pretty=?", "abbrev-commit", "no-abbrev-commit", "author=", "committer=",
	"since=", "until=", "after=", "before=", "grep=", "invert-grep", "all-match",
	"regexp-ignore-case", "extended-regexp", "fixed-strings", "basic-regexp", "reverse",
	"first-parent", "merges", "no-merges", "follow", "topo-order", "date-order",
	"author-date-order", "left-right", "cherry-pick", "cherry-mark", "skip=", "max-count=",
	"max-parents=", "min-parents=", "no-walk=?", "date=", "full-diff", "parents", "children",
	"boundary", "simplify-by-decoration", "source", "mailmap", "use-mailmap", "no-mailmap",
	"notes=?", "no-notes", "expand-tabs=?", "no-expand-tabs", "relative-date", "log-size",
	"encoding=", "ancestry-path=?", "full-history", "dense", "sparse", "simplify-merges",
	"show-pulls", "walk-reflogs", "count",
}

// gitSub holds the option tables of the read-only git subcommands. git's
// parse-options clusters short options and takes values attached or in the
// next word, like getopt; it also accepts abbreviated long options, which,
// as everywhere here, ask.
var gitSub = map[string]optSpec{
	"status": opts("sbvz", "", "u",
		"short", "branch", "porcelain=?", "long", "verbose", "untracked-files=?", "ignored=?",
		"ignore-submodules=?", "column=?", "no-column", "ahead-behind", "no-ahead-behind",
		"renames", "no-renames", "find-renames=?", "show-stash", "null"),
	"diff": opts("0123puszRawbW", "SG", "UMCB", gitDiffLongs...),
	"log":  opts("0123456789puszRawbWiEFm", "nSG", "UMCB", append(gitLogLongs, gitDiffLongs...)...),
	"show": opts("0123456789puszRawbWiEFm", "nSG", "UMCB", append(gitLogLongs, gitDiffLongs...)...),
	"rev-parse": opts("q", "", "",
		"show-toplevel", "abbrev-ref=?", "short=?", "verify", "quiet", "git-dir", "show-prefix",
		"show-cdup", "is-inside-work-tree", "is-inside-git-dir", "is-bare-repository",
		"is-shallow-repository", "symbolic", "symbolic-full-name", "git-common-dir",
		"absolute-git-dir", "show-superproject-working-tree", "show-object-format=?", "all",
		"branches=?", "tags=?", "remotes=?", "revs-only", "no-revs", "flags", "no-flags",
		"path-format="),
	"branch": opts("avrl", "", "",
		"all", "verbose", "remotes", "list", "show-current", "color=?", "no-color", "sort=",
		"format=", "ignore-case", "omit-empty", "no-column"),
}

func gitReadOnly(args []word) bool {
	i := 0
	for ; i < len(args) && gitGlobal[args[i].value]; i++ {
	}
	if i == len(args) || args[i].leadGlob {
		return false
	}
	sub := args[i].value
	spec, ok := gitSub[sub]
	if !ok {
		return false
	}
	p, ok := spec.parse(args[i+1:])
	if !ok {
		return false
	}
	if sub == "branch" && len(p.operands) > 0 {
		return p.has("-l", "--list") // git branch NAME creates a branch
	}
	return true
}
