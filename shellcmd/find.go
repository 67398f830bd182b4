package shellcmd

import "strings"

// findPredicates are the find expression words that only test or print, with
// how many words follow each as its argument. Left out, so asking: -exec,
// -execdir, -ok, -okdir (run programs), -delete, -fprint, -fprint0, -fprintf,
// -fls (write files), and anything newer or unknown.
var findPredicates = map[string]int{
	"-print": 0, "-print0": 0, "-ls": 0, "-not": 0, "!": 0, "(": 0, ")": 0, ",": 0,
	"-o": 0, "-a": 0, "-and": 0, "-or": 0, "-empty": 0, "-true": 0, "-false": 0,
	"-prune": 0, "-quit": 0, "-depth": 0, "-d": 0, "-xdev": 0, "-mount": 0, "-follow": 0,
	"-noleaf": 0, "-ignore_readdir_race": 0, "-noignore_readdir_race": 0, "-daystart": 0,
	"-readable": 0, "-writable": 0, "-executable": 0, "-nouser": 0, "-nogroup": 0,
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1,
	"-lname": 1, "-ilname": 1, "-regex": 1, "-iregex": 1, "-regextype": 1, "-type": 1,
	"-xtype": 1, "-maxdepth": 1, "-mindepth": 1, "-newer": 1, "-anewer": 1, "-cnewer": 1,
	"-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1,
	"-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-links": 1, "-inum": 1,
	"-samefile": 1, "-used": 1, "-printf": 1, "-fstype": 1,
}

// findActions run a program or delete: on / or the home they are blocked.
var findActions = map[string]bool{
	"-delete": true, "-exec": true, "-execdir": true, "-ok": true, "-okdir": true,
}

// findSplit returns where find's starting points begin and end in args (the
// arguments after "find"): after the leading options -H, -L, -P, -D opts and
// -Olevel, up to the first word starting with "-" or being "(" or "!".
func findSplit(args []string) (start, end int) {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P":
			i++
		case a == "-D":
			i += 2
		case strings.HasPrefix(a, "-O") && len(a) > 2:
			i++
		case a == "--":
			i++
			start = i
			goto points
		default:
			start = i
			goto points
		}
	}
	return len(args), len(args)
points:
	end = start
	for end < len(args) && !isFindExpr(args[end]) {
		end++
	}
	return start, end
}

func isFindExpr(a string) bool {
	return strings.HasPrefix(a, "-") || a == "(" || a == "!"
}

// findReadOnly reports whether a find command only tests and prints. Leading
// options other than -H -L -P ask, as does any expression word not in
// findPredicates and any glob that could expand into an expression word.
func findReadOnly(args []word) bool {
	argv := make([]string, len(args))
	for i, w := range args {
		if w.leadGlob {
			return false
		}
		argv[i] = w.value
	}
	start, end := findSplit(argv)
	for _, a := range argv[:start] {
		if a != "-H" && a != "-L" && a != "-P" && a != "--" {
			return false
		}
	}
	for i := end; i < len(argv); i++ {
		n, ok := findPredicates[argv[i]]
		if !ok && !isNewerXY(argv[i]) {
			return false
		}
		if !ok {
			n = 1
		}
		if n > 0 && i+n >= len(argv) {
			return false // a predicate missing its argument: find fails, ask
		}
		i += n
	}
	return true
}

// isNewerXY matches -newerXY (X, Y one of a, B, c, m, t; t only for Y).
func isNewerXY(a string) bool {
	rest, ok := strings.CutPrefix(a, "-newer")
	return ok && len(rest) == 2 && strings.IndexByte("aBcm", rest[0]) >= 0 && strings.IndexByte("aBcmt", rest[1]) >= 0
}

// matchFindRoot blocks find on / or the home directory with an action that
// deletes or runs a program. A find fed its arguments by xargs with no
// expression of its own is blocked too: xargs may supply "/ -delete".
func matchFindRoot(c Command) bool {
	if c.Name != "find" {
		return false
	}
	args := c.Argv[1:]
	start, end := findSplit(args)
	if c.Appended && end == len(args) {
		return true
	}
	root := false
	for _, t := range args[start:end] {
		if isRootTarget(t) || isHomeTarget(t) {
			root = true
		}
	}
	if !root {
		return false
	}
	for _, a := range args[end:] {
		if findActions[a] {
			return true
		}
	}
	return false
}
