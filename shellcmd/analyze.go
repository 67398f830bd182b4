package shellcmd

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deeply scripts inside scripts (bash -c, eval) are
// followed; deeper nesting is refused rather than left unanalysed.
const maxDepth = 8

// Verdict is what Analyze found out about a command.
type Verdict struct {
	// Blocked is set when the command is on the hard block list or cannot be
	// analysed; such a command must not run whatever the rules say.
	Blocked bool
	// BlockReason says which rule blocked the command and why.
	BlockReason string
	// ReadOnly is set when every command in it only reads (see the package
	// comment); such a command may run without approval.
	ReadOnly bool
	// Commands lists each simple command, and each command a wrapper runs,
	// as its arguments joined by spaces, in the order they run (a command
	// substitution before the command using its output). A command named by
	// a path is listed again under its base name, so that permission
	// patterns written for the name ("rm *") match it.
	Commands []string
	// Obscured names the first program whose name is computed at run time
	// ($(echo rm), $CMD) or is a glob pattern (/bin/r[m]), as written; ""
	// when every program is named plainly. Nobody can say what such a
	// command runs, so no profile may run it unasked.
	Obscured string
}

// Analyze checks command against DefaultConfig.
func Analyze(command string) Verdict {
	return defaultConfig.Analyze(command)
}

// Analyze checks command against the block list in c.
func (c Config) Analyze(command string) Verdict {
	a := &analyzer{cfg: &c, printer: syntax.NewPrinter(), readOnly: true}
	a.script(command, scope{}, nil)
	v := Verdict{
		Blocked:     a.blocked != "",
		BlockReason: a.blocked,
		Commands:    a.display,
		Obscured:    a.obscured,
	}
	v.ReadOnly = !v.Blocked && a.readOnly && a.simple > 0
	return v
}

// analyzer walks one parsed command. It only appends to its slices, in source
// order, so the result is deterministic.
type analyzer struct {
	cfg      *Config
	printer  *syntax.Printer
	blocked  string
	readOnly bool
	simple   int      // simple commands seen
	display  []string // Verdict.Commands
	names    []string // every command name seen, in order
	quiet    int      // > 0 while analysing guesses not listed in display
	obscured string   // Verdict.Obscured
}

// scope is where in the source a statement sits.
type scope struct {
	depth int    // scripts inside scripts
	fn    string // enclosing function
}

// pipe is the pipeline context handed down to the statements of one stage.
type pipe struct {
	upstream   []string
	piped      bool
	background bool
}

func (a *analyzer) block(reason string) {
	if a.blocked == "" {
		a.blocked = reason
	}
}

func (a *analyzer) notReadOnly() { a.readOnly = false }

// script parses src and analyses its statements.
func (a *analyzer) script(src string, sc scope, upstream []string) {
	if sc.depth > maxDepth {
		a.block(fmt.Sprintf("blocked: scripts nested more than %d levels deep cannot be analysed; run the inner command directly", maxDepth))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.block(fmt.Sprintf("blocked: the command cannot be parsed (%v); write it as plain POSIX/Bash shell", err))
		return
	}
	a.stmts(f.Stmts, sc, pipe{upstream: upstream})
}

func (a *analyzer) stmts(list []*syntax.Stmt, sc scope, p pipe) {
	for _, s := range list {
		a.stmt(s, sc, p)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, sc scope, p pipe) {
	if s == nil {
		return
	}
	if s.Background {
		p.background = true
	}
	if s.Coprocess || s.Disown {
		a.notReadOnly()
	}
	redirs := a.redirects(s.Redirs, sc)
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		a.call(call, redirs, sc, p)
		return
	}
	if len(redirs) > 0 {
		// Redirections of a compound command: { ...; } > out.
		if !redirectsReadOnly(redirs) {
			a.notReadOnly()
		}
		a.check(Command{Redirects: redirs, Func: sc.fn, Piped: p.piped, Background: p.background, Upstream: p.upstream})
	}
	a.command(s.Cmd, sc, p)
}

// command analyses every kind of command but the simple one.
func (a *analyzer) command(cmd syntax.Command, sc scope, p pipe) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.pipeline(c, sc, p)
			return
		}
		a.stmt(c.X, sc, p)
		a.stmt(c.Y, sc, p)
	case *syntax.Block:
		a.stmts(c.Stmts, sc, p)
	case *syntax.Subshell:
		a.stmts(c.Stmts, sc, p)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			a.stmts(c.Cond, sc, p)
			a.stmts(c.Then, sc, p)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, sc, p)
		a.stmts(c.Do, sc, p)
	case *syntax.ForClause:
		if _, ok := c.Loop.(*syntax.CStyleLoop); ok {
			a.notReadOnly() // arithmetic, like (( )): a[$(cmd)] in it runs cmd
		}
		a.scan(c.Loop, sc)
		a.stmts(c.Do, sc, p)
	case *syntax.CaseClause:
		a.scan(c.Word, sc)
		for _, it := range c.Items {
			for _, pat := range it.Patterns {
				a.scan(pat, sc)
			}
			a.stmts(it.Stmts, sc, p)
		}
	case *syntax.FuncDecl:
		name := ""
		if c.Name != nil {
			name = unescapeUnquoted(c.Name.Value)
		}
		a.stmt(c.Body, scope{depth: sc.depth, fn: name}, pipe{})
	case *syntax.TimeClause:
		a.stmt(c.Stmt, sc, p)
	case *syntax.TestClause:
		// [[ ... ]] only tests, but not with an expansion or a "$" or "`"
		// anywhere: -eq and -v evaluate their operands as arithmetic, and
		// an array subscript there runs command substitutions even from a
		// quoted string ([[ -v 'a[$(touch x)]' ]]).
		if hasExpansion(c.X) || hasDollar(c.X) {
			a.notReadOnly()
		}
		a.scan(c.X, sc)
	case *syntax.DeclClause:
		// declare/export/local/readonly change the shell's variables.
		a.notReadOnly()
		a.scan(c, sc)
		if c.Variant != nil {
			a.display = append(a.display, c.Variant.Value)
		}
	case *syntax.CoprocClause:
		a.notReadOnly()
		a.stmt(c.Stmt, sc, p)
	case *syntax.TestDecl:
		a.notReadOnly()
		a.stmt(c.Body, sc, p)
	default:
		// (( )), let and anything newer: not read-only, substitutions analysed.
		a.notReadOnly()
		a.scan(c, sc)
	}
}

// pipeline analyses the stages of a | b | c in order, telling each stage
// which commands feed it.
func (a *analyzer) pipeline(c *syntax.BinaryCmd, sc scope, p pipe) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) &&
			len(s.Redirs) == 0 && !s.Background && !s.Negated {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(c.X)
	flatten(c.Y)
	upstream := append([]string(nil), p.upstream...)
	for _, s := range stages {
		before := len(a.names)
		a.stmt(s, sc, pipe{upstream: upstream, piped: true, background: p.background})
		upstream = append(upstream[:len(upstream):len(upstream)], a.names[before:]...)
	}
}

// scan analyses the command and process substitutions inside n, which is a
// word, an expression or any other node that is not a statement list.
func (a *analyzer) scan(n syntax.Node, sc scope) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			a.stmts(x.Stmts, sc, pipe{})
			return false
		case *syntax.ProcSubst:
			a.stmts(x.Stmts, sc, pipe{})
			return false
		}
		return true
	})
}

// hasExpansion reports whether n holds anything expanded at run time.
func hasExpansion(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(node syntax.Node) bool {
		switch node.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
			found = true
		}
		return !found
	})
	return found
}

// hasDollar reports whether a literal or quoted text in n holds "$" or "`".
func hasDollar(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.Lit:
			found = found || strings.ContainsAny(x.Value, "$`")
		case *syntax.SglQuoted:
			found = found || strings.ContainsAny(x.Value, "$`")
		}
		return !found
	})
	return found
}

// redirects resolves the redirections of a statement.
func (a *analyzer) redirects(rs []*syntax.Redirect, sc scope) []Redirect {
	var out []Redirect
	for _, r := range rs {
		target := ""
		if r.Word != nil {
			w := a.word(r.Word, sc)
			if !w.static || w.glob {
				a.notReadOnly() // < $F, > *.txt: a target only known at run time
			}
			target = w.value
		}
		if r.Hdoc != nil {
			a.scan(r.Hdoc, sc)
		}
		out = append(out, Redirect{Op: r.Op.String(), Target: target})
	}
	return out
}

// redirectsReadOnly reports whether no redirection writes to a file.
func redirectsReadOnly(rs []Redirect) bool {
	for _, r := range rs {
		if !isWriteOp(r.Op) {
			continue
		}
		if r.Op == ">&" && isDescriptor(r.Target) {
			continue // 2>&1, >&-
		}
		if isHarmlessDevice(r.Target) && r.Target != "/dev/tty" {
			continue
		}
		return false
	}
	return true
}

func isDescriptor(t string) bool {
	t = strings.TrimSuffix(t, "-")
	return strings.Trim(t, "0123456789") == ""
}

// call analyses a simple command.
func (a *analyzer) call(c *syntax.CallExpr, redirs []Redirect, sc scope, p pipe) {
	for _, as := range c.Assigns {
		// VAR=x changes what later commands do (PATH, LD_PRELOAD, PAGER).
		a.notReadOnly()
		a.scan(as, sc)
	}
	if !redirectsReadOnly(redirs) {
		a.notReadOnly()
	}
	before := len(a.names)
	args := a.words(c.Args, sc)
	subst := append([]string(nil), a.names[before:]...)
	if len(args) == 0 {
		if len(redirs) > 0 {
			a.check(Command{Redirects: redirs, Func: sc.fn, Piped: p.piped, Background: p.background, Upstream: p.upstream})
		}
		return
	}
	a.simple++
	cmd := Command{
		Redirects:   redirs,
		Upstream:    p.upstream,
		Substituted: subst,
		Func:        sc.fn,
		Piped:       p.piped,
		Background:  p.background,
	}
	a.run(cmd, args, sc)
}

// run analyses one command with its arguments, then what it runs if it is a
// wrapper.
func (a *analyzer) run(cmd Command, args []word, sc scope) {
	cmd.Argv = make([]string, len(args))
	for i, w := range args {
		cmd.Argv[i] = w.value
		if !w.static {
			// $VAR, $(...), ${X:--delete}: the program sees a word the
			// analysis does not know (find . ${X:--delete}).
			a.notReadOnly()
		}
	}
	cmd.Dynamic = !args[0].static
	cmd.Name = cmd.Argv[0]
	if !cmd.Dynamic && strings.Contains(cmd.Name, "/") {
		cmd.Name = path.Base(cmd.Name)
	}
	if a.quiet == 0 {
		a.display = append(a.display, display(args))
		if cmd.Name != cmd.Argv[0] {
			named := append([]word{{value: cmd.Name, static: true}}, args[1:]...)
			a.display = append(a.display, display(named))
		}
	}
	a.names = append(a.names, cmd.Name)
	a.check(cmd)

	if !cmd.Dynamic && strings.Contains(cmd.Argv[0], "/") && !trustedPath(cmd.Argv[0]) {
		a.notReadOnly() // ./ls may be anything
	}
	if (cmd.Dynamic || args[0].glob) && a.obscured == "" {
		a.obscured = cmd.Argv[0]
	}
	switch {
	case cmd.Dynamic:
		a.notReadOnly()
		a.checkAs(cmd, dynamicCandidates)
		return
	case args[0].glob:
		// /bin/r[m] is whichever program the pattern matches.
		a.notReadOnly()
		a.runAs(cmd, args, sc)
		return
	}
	w, ok := unwrap(cmd)
	if !ok {
		if !readOnly(cmd.Name, args[1:]) {
			a.notReadOnly()
		}
		return
	}
	if !w.readOnly {
		a.notReadOnly()
	}
	switch {
	case w.script != nil:
		before := a.simple
		a.script(*w.script, scope{depth: sc.depth + 1, fn: sc.fn}, cmd.Upstream)
		if a.simple == before {
			// env -S '' runs no command, so it prints the environment.
			a.notReadOnly()
		}
		if w.extra != nil {
			a.quiet++
			a.script(*w.extra, scope{depth: sc.depth + 1, fn: sc.fn}, cmd.Upstream)
			a.quiet--
		}
	case w.inner > 0 && w.inner < len(args):
		cmd.Appended = cmd.Appended || w.appends
		a.run(cmd, args[w.inner:], sc)
	}
	if w.uncertain {
		a.checkTails(cmd, w.inner)
	}
}

// checkTails runs the block list over every tail of cmd.Argv that starts with
// a word that could be a program, but the one at skip: a wrapper option the
// analysis does not know may take a value (env -X VALUE rm -rf /).
func (a *analyzer) checkTails(cmd Command, skip int) {
	for i := 1; i < len(cmd.Argv); i++ {
		if i == skip || strings.HasPrefix(cmd.Argv[i], "-") {
			continue
		}
		c := cmd
		c.Argv = cmd.Argv[i:]
		c.Name = path.Base(c.Argv[0])
		a.check(c)
	}
}

// dynamicCandidates are the programs a computed command name ($(echo rm),
// $CMD) is checked as: those whose rules look at the arguments, so that
// "$(echo rm) -rf /" is blocked while "$CMD build" is not.
var dynamicCandidates = []string{"rm", "chmod", "chown", "chgrp", "dd", "find"}

// globCandidates are the programs a glob in a command name (/bin/r[m],
// /usr/bin/*sh) is checked as when the pattern matches them: every name a
// block rule or a wrapper knows.
var globCandidates = func() []string {
	names := []string{
		"rm", "mkfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs",
		"mkfs.vfat", "mkfs.fat", "mke2fs", "dd", "chmod", "chown", "chgrp", "shutdown",
		"reboot", "halt", "poweroff", "init", "telinit", "systemctl", "tee", "find",
		"env", "builtin", "busybox", "curl", "wget",
	}
	names = append(names, slices.Sorted(maps.Keys(wrappers))...)
	names = append(names, interpreters...)
	return names
}()

// checkAs runs the block list over cmd as if it were each of the names. Argv
// keeps the name as written, so the reason shows what was sent.
func (a *analyzer) checkAs(cmd Command, names []string) {
	for _, n := range names {
		c := cmd
		c.Name, c.Dynamic = n, false
		a.check(c)
	}
}

// runAs analyses a command whose name is a glob pattern as each program in
// globCandidates the pattern matches, wrappers included, without listing
// those guesses in Verdict.Commands.
func (a *analyzer) runAs(cmd Command, args []word, sc scope) {
	a.quiet++
	defer func() { a.quiet-- }()
	for _, n := range globCandidates {
		if ok, err := path.Match(cmd.Name, n); err != nil || !ok {
			continue
		}
		named := append([]word{{value: n, static: true}}, args[1:]...)
		a.run(cmd, named, sc)
	}
}

// check runs the block list over one command.
func (a *analyzer) check(c Command) {
	if a.blocked != "" {
		return
	}
	if len(c.Argv) == 0 {
		c.Argv = []string{""}
	}
	for _, r := range a.cfg.Block {
		if r.Match != nil && r.Match(c) {
			a.block(fmt.Sprintf("blocked by rule %s: %s (%s)", r.Name, r.Reason, strings.Join(c.Argv, " ")))
			return
		}
	}
}

// trustedPath reports whether a command named by path comes from a system
// binary directory.
func trustedPath(p string) bool {
	switch path.Dir(path.Clean(p)) {
	case "/bin", "/usr/bin", "/usr/local/bin":
		return true
	}
	return false
}
