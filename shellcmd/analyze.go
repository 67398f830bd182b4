package shellcmd

import (
	"fmt"
	"path"
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
		// [[ ... ]] only tests; its words may still hold substitutions.
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

// redirects resolves the redirections of a statement.
func (a *analyzer) redirects(rs []*syntax.Redirect, sc scope) []Redirect {
	var out []Redirect
	for _, r := range rs {
		target := ""
		if r.Word != nil {
			target = a.word(r.Word, sc).value
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
	}
	cmd.Dynamic = !args[0].static
	cmd.Name = cmd.Argv[0]
	if !cmd.Dynamic && strings.Contains(cmd.Name, "/") {
		cmd.Name = path.Base(cmd.Name)
	}
	a.display = append(a.display, display(args))
	if cmd.Name != cmd.Argv[0] {
		named := append([]word{{value: cmd.Name, static: true}}, args[1:]...)
		a.display = append(a.display, display(named))
	}
	a.names = append(a.names, cmd.Name)
	a.check(cmd)

	if !cmd.Dynamic && strings.Contains(cmd.Argv[0], "/") && !trustedPath(cmd.Argv[0]) {
		a.notReadOnly() // ./ls may be anything
	}
	w, ok := unwrap(cmd)
	if !ok {
		if !readOnly(cmd) {
			a.notReadOnly()
		}
		return
	}
	if !w.readOnly {
		a.notReadOnly()
	}
	switch {
	case w.script != nil:
		a.script(*w.script, scope{depth: sc.depth + 1, fn: sc.fn}, cmd.Upstream)
	case w.inner > 0 && w.inner < len(args):
		a.run(cmd, args[w.inner:], sc)
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
