package shellcmd

import (
	"strings"
)

// optKind says whether an option takes a value.
type optKind int

const (
	noArg  optKind = iota
	reqArg         // attached (-k1, --key=1) or the next word (-k 1, --key 1)
	optArg         // attached only (-uno, --color=never)
)

// optSpec is one program's allowlist of options, as getopt_long sees them.
// An option missing here is not known to be harmless, so a command using it
// is not read-only.
type optSpec struct {
	short map[byte]optKind
	long  map[string]optKind
}

// opts builds an optSpec. flags are short options without a value, valued
// those that take one, optional those that take an attached value if any.
// longs are long option names without dashes; a trailing "=" marks a required
// value, "=?" an optional one.
func opts(flags, valued, optional string, longs ...string) optSpec {
	s := optSpec{short: map[byte]optKind{}, long: map[string]optKind{}}
	for i := range len(flags) {
		s.short[flags[i]] = noArg
	}
	for i := range len(valued) {
		s.short[valued[i]] = reqArg
	}
	for i := range len(optional) {
		s.short[optional[i]] = optArg
	}
	for _, l := range longs {
		switch {
		case strings.HasSuffix(l, "=?"):
			s.long[strings.TrimSuffix(l, "=?")] = optArg
		case strings.HasSuffix(l, "="):
			s.long[strings.TrimSuffix(l, "=")] = reqArg
		default:
			s.long[l] = noArg
		}
	}
	return s
}

// gnu adds --help and --version, which every GNU tool has and which only print.
func gnu(s optSpec) optSpec {
	s.long["help"] = noArg
	s.long["version"] = noArg
	return s
}

// parsed is a command line split by getopt.
type parsed struct {
	// options holds each option as written without its value: "-o", "--output".
	options []string
	// operands are the words that are not options or option values.
	operands []word
}

// has reports whether any of the options was given.
func (p parsed) has(names ...string) bool {
	for _, o := range p.options {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

// parse splits args the way GNU getopt_long does with argument permutation
// (options may follow operands, "--" ends them, "-" is an operand). It is
// strict where getopt is lenient: ok is false when an option is not in the
// spec exactly as written (getopt would accept an unambiguous abbreviation
// such as --outp for --output; we never expand one into an allowed option),
// when a value is missing or given to an option that takes none, and when a
// word before "--" is a glob that could expand to a word starting with "-"
// (a file named "--output=x" would become an option).
func (s optSpec) parse(args []word) (parsed, bool) {
	var p parsed
	for i := 0; i < len(args); i++ {
		w := args[i]
		a := w.value
		switch {
		case w.leadGlob:
			return p, false
		case a == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p, true
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			kind, known := s.long[name]
			if !known {
				return p, false
			}
			p.options = append(p.options, "--"+name)
			switch {
			case kind == noArg && hasValue:
				return p, false
			case kind == reqArg && !hasValue:
				if i+1 >= len(args) || args[i+1].leadGlob {
					return p, false
				}
				i++
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				kind, known := s.short[a[j]]
				if !known {
					return p, false
				}
				p.options = append(p.options, "-"+a[j:j+1])
				if kind == noArg {
					continue
				}
				if kind == reqArg && j == len(a)-1 {
					if i+1 >= len(args) || args[i+1].leadGlob {
						return p, false
					}
					i++
				}
				break // the rest of the word is the value
			}
		default:
			p.operands = append(p.operands, w)
		}
	}
	return p, true
}

// skipOptions finds where the command a wrapper runs starts, after the
// wrapper's options, for the block list: it is lenient the way getopt is,
// expanding an abbreviated long option (--kill-aft) to the valued option it
// names so that its value is not taken for the command. strict is false when
// an option is unknown or abbreviated, so the whole is not read-only.
// Wrappers stop at their first operand (getopt's "+" mode); inner is 0 when
// there is none. seen lists the options given; unknown is set when one of
// them is not in the spec at all, so its value, if it takes one, may have
// been taken for the command.
func (s optSpec) skipOptions(args []string) (inner int, strict bool, seen []string, unknown bool) {
	strict = true
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1, strict, seen, unknown
			}
			return 0, strict, seen, unknown
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			kind, known := s.long[name]
			if !known {
				strict = false
				kind = s.abbreviated(name)
				unknown = unknown || !s.abbreviates(name)
			}
			seen = append(seen, "--"+name)
			if kind == reqArg && !hasValue {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				kind, known := s.short[a[j]]
				seen = append(seen, "-"+a[j:j+1])
				if !known {
					strict, unknown = false, true
					continue
				}
				if kind == noArg {
					continue
				}
				if kind == reqArg && j == len(a)-1 {
					i++
				}
				break
			}
		default:
			return i, strict, seen, unknown
		}
	}
	return 0, strict, seen, unknown
}

// abbreviated returns the kind of the long option name abbreviates, as getopt
// would take it: reqArg when any option it may abbreviate takes a value, which
// for finding the wrapped command errs towards skipping one more word.
func (s optSpec) abbreviated(name string) optKind {
	kind := noArg
	if name == "" {
		return kind
	}
	for l, k := range s.long {
		if strings.HasPrefix(l, name) && k == reqArg {
			kind = reqArg
		}
	}
	return kind
}

// abbreviates reports whether name is a prefix of a long option in s.
func (s optSpec) abbreviates(name string) bool {
	for l := range s.long {
		if name != "" && strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

// isLongPrefix reports whether a names the long option full or an
// abbreviation of it that getopt could accept (at least one letter).
func isLongPrefix(a, full string) bool {
	name, _, _ := strings.Cut(a, "=")
	return len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(full, name)
}
