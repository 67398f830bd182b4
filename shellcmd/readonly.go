package shellcmd

import (
	"slices"
	"strings"
)

// Read-only programs and the options each may use. The tables are allowlists:
// a program or option missing here is not known to be harmless, so a command
// using it needs approval. Each table lists only options that read or change
// what is printed; the comment on a table names what it leaves out and why.
// Short options that take a value must be marked so (valued): a letter wrongly
// listed as a plain flag only makes a command ask, but a plain flag listed as
// valued would hide the letters after it (-Xo file).

// anyArgs programs cannot write or run anything whatever their arguments:
// echo prints them, true and false ignore them, test and [ evaluate them;
// but not with a "$" or "`" in an argument, which bash's test -v expands in an
// array subscript.
var anyArgs = map[string]bool{
	"echo": true, "true": true, "false": true, "test": true, "[": true,
}

// grepOpts serves grep, egrep and fgrep. All grep options read.
var grepOpts = gnu(opts("0123456789EFGPiywxzsvnHhbloqLcTUZraIRV", "efmABCdD", "",
	"extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "regexp=", "file=",
	"ignore-case", "no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages",
	"invert-match", "max-count=", "byte-offset", "line-number", "line-buffered", "with-filename",
	"no-filename", "label=", "only-matching", "quiet", "silent", "binary-files=", "text",
	"directories=", "devices=", "recursive", "dereference-recursive", "include=", "exclude=",
	"exclude-from=", "exclude-dir=", "files-without-match", "files-with-matches", "count",
	"initial-tab", "null", "before-context=", "after-context=", "context=", "color=?", "colour=?",
	"binary"))

// programs maps each read-only program to its option table. Left out on
// purpose: rg --pre/--pre-glob/--hostname-bin/--search-zip (run programs),
// file -C (writes a magic file), -p (resets access times), -z (decompresses
// with external programs), sort -o/--output, --compress-program (runs a
// program), -T/--temporary-directory (writes there), cd -e/-@, env-changing
// options of any kind.
var programs = map[string]optSpec{
	"ls": gnu(opts("1aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ", "ITw", "",
		"all", "almost-all", "author", "escape", "block-size=", "ignore-backups", "color=?",
		"directory", "dired", "classify=?", "file-type", "format=", "full-time",
		"group-directories-first", "no-group", "human-readable", "si", "dereference-command-line",
		"dereference-command-line-symlink-to-dir", "hide=", "hyperlink=?", "indicator-style=",
		"inode", "ignore=", "kibibytes", "dereference", "numeric-uid-gid", "literal",
		"hide-control-chars", "show-control-chars", "quote-name", "quoting-style=", "reverse",
		"recursive", "size", "sort=", "time=", "time-style=", "tabsize=", "width=", "context", "zero")),
	"cat": gnu(opts("AbeEnstTuv", "", "",
		"show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs",
		"show-nonprinting")),
	"head": gnu(opts("qvz0123456789", "cn", "",
		"bytes=", "lines=", "quiet", "silent", "verbose", "zero-terminated")),
	"tail": gnu(opts("fFqvz0123456789", "cns", "",
		"bytes=", "lines=", "follow=?", "retry", "pid=", "quiet", "silent", "sleep-interval=",
		"verbose", "zero-terminated", "max-unchanged-stats=")),
	"wc": gnu(opts("clmwL", "", "",
		"bytes", "chars", "lines", "words", "max-line-length", "files0-from=", "total=")),
	"grep":  grepOpts,
	"egrep": grepOpts,
	"fgrep": grepOpts,
	"rg": gnu(opts("iSsnNlcvwxFHILuUaoq0pPbhV.", "ABCefgtTmMrjEd", "",
		"ignore-case", "smart-case", "case-sensitive", "line-number", "no-line-number",
		"files-with-matches", "files-without-match", "count", "count-matches", "invert-match",
		"word-regexp", "line-regexp", "fixed-strings", "with-filename", "no-filename", "follow",
		"unrestricted", "multiline", "multiline-dotall", "text", "only-matching", "quiet", "null",
		"pretty", "pcre2", "byte-offset", "hidden", "no-hidden", "no-ignore", "no-ignore-vcs",
		"no-ignore-dot", "no-ignore-parent", "no-ignore-global", "no-ignore-exclude",
		"no-config", "files", "json", "vimgrep", "heading", "no-heading", "column", "no-column",
		"stats", "trim", "type-list", "debug", "glob=", "iglob=", "type=", "type-not=",
		"max-count=", "max-columns=", "max-depth=", "max-filesize=", "context=",
		"before-context=", "after-context=", "regexp=", "file=", "replace=", "threads=",
		"encoding=", "color=", "colors=", "sort=", "sortr=", "path-separator=", "context-separator=",
		"field-match-separator=", "field-context-separator=", "ignore-file=", "engine=",
		"one-file-system", "no-messages", "passthru", "crlf", "null-data", "binary")),
	"pwd": gnu(opts("LP", "", "", "logical", "physical")),
	"stat": gnu(opts("Lft", "c", "",
		"dereference", "file-system", "format=", "printf=", "terse", "cached=")),
	"du": gnu(opts("0abcDhHklLmPsSx", "BdtX", "",
		"null", "all", "apparent-size", "block-size=", "bytes", "total", "dereference-args",
		"max-depth=", "human-readable", "inodes", "dereference", "count-links", "no-dereference",
		"separate-dirs", "si", "summarize", "threshold=", "time=?", "time-style=",
		"exclude-from=", "exclude=", "one-file-system")),
	"df": gnu(opts("ahHiklPTv", "Btx", "",
		"all", "block-size=", "human-readable", "si", "inodes", "local", "output=?",
		"portability", "total", "type=", "print-type", "exclude-type=", "sync", "no-sync")),
	"which": opts("as", "", "", "all", "skip-alias", "skip-functions", "skip-dot", "skip-tilde"),
	"cut": gnu(opts("nsz", "bcdf", "",
		"bytes=", "characters=", "delimiter=", "fields=", "complement", "only-delimited",
		"output-delimiter=", "zero-terminated")),
	"tr": gnu(opts("cCdst", "", "",
		"complement", "delete", "squeeze-repeats", "truncate-set1")),
	"basename": gnu(opts("az", "s", "", "multiple", "suffix=", "zero")),
	"dirname":  gnu(opts("z", "", "", "zero")),
	"cd":       opts("LP", "", ""),
	"file": gnu(opts("0bcdEhiklLNnrs", "eFfmP", "",
		"brief", "checking-printout", "exclude=", "exclude-quiet=", "extension", "files-from=",
		"separator=", "mime", "mime-type", "mime-encoding", "apple", "keep-going", "list",
		"dereference", "no-dereference", "magic-file=", "no-pad", "no-buffer", "print0", "raw",
		"special-files", "parameter=")),
	"sort": gnu(opts("bcCdfghiMmnrRsuVz", "ktS", "",
		"ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort",
		"ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort",
		"reverse", "version-sort", "key=", "field-separator=", "unique", "zero-terminated",
		"stable", "buffer-size=", "check=?", "merge", "parallel=", "debug", "sort=",
		"random-source=", "files0-from=")),
	"uniq": gnu(opts("cdDiuz", "fsw", "",
		"count", "repeated", "all-repeated=?", "group=?", "ignore-case", "unique",
		"zero-terminated", "skip-fields=", "skip-chars=", "check-chars=")),
}

// readOnly classifies one command that is not a wrapper, given its static
// name and its arguments (every one static; the caller refuses dynamic words).
// It errs towards "not read-only": a command missing here needs approval,
// nothing worse.
func readOnly(name string, args []word) bool {
	if anyArgs[name] {
		if name != "test" && name != "[" {
			return true
		}
		// test -v 'a[$(cmd)]' runs cmd: bash evaluates the subscript.
		return !slices.ContainsFunc(args, func(w word) bool { return strings.ContainsAny(w.value, "$`") })
	}
	switch name {
	case "find":
		return findReadOnly(args)
	case "git":
		return gitReadOnly(args)
	case "go":
		return goReadOnly(args)
	}
	spec, ok := programs[name]
	if !ok {
		return false
	}
	p, ok := spec.parse(args)
	if !ok {
		return false
	}
	if name == "uniq" {
		return len(p.operands) <= 1 // uniq IN OUT writes OUT
	}
	return true
}

// goCmds holds, per read-only go subcommand, its flags and whether each takes
// a value. The go command parses flags with package flag: one or two dashes,
// no clusters, no abbreviations, a value attached with "=" or in the next
// word. Left out: go env -w/-u (write the go env file), vet -vettool and
// list -toolexec (run programs), list -export/-compiled (build), -mod (may
// rewrite go.mod), -C (another directory), -modfile, -overlay, -u and
// -versions (network). go test is not read-only: it builds and runs code.
var goCmds = map[string]map[string]bool{
	"version": {"m": false, "v": false, "json": false},
	"env":     {"json": false, "changed": false},
	"vet":     {"json": false, "tags": true, "v": false, "x": false, "n": false},
	"list":    {"m": false, "json": false, "f": true, "deps": false, "test": false, "e": false, "find": false, "tags": true},
}

func goReadOnly(args []word) bool {
	if len(args) == 0 {
		return false
	}
	flags, ok := goCmds[args[0].value]
	if !ok {
		return false
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i].value
		if rest[i].leadGlob {
			return false
		}
		if a == "--" {
			return true
		}
		if len(a) < 2 || a[0] != '-' {
			continue // a package, file or variable name
		}
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		name, _, hasValue := strings.Cut(name, "=")
		valued, known := flags[name]
		if !known {
			return false
		}
		if valued && !hasValue {
			i++
			if i >= len(rest) || rest[i].leadGlob {
				return false
			}
		}
	}
	return true
}
