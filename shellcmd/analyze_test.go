package shellcmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAnalyzeBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		rule string // "" means not blocked
	}{
		{"rm -rf /", "rm-root"},
		{"rm -rf /*", "rm-root"},
		{"rm -fr ~", "rm-root"},
		{"rm -r -f $HOME", "rm-root"},
		{`rm -rf "${HOME}"/*`, "rm-root"},
		{"rm --recursive --force //", "rm-root"},
		{"rm -rf /tmp/..", "rm-root"},
		{"rm --no-preserve-root -rf /x", "rm-root"},
		{"rm -rf -- /", "rm-root"},
		{"rm -rf ./build", ""},
		{"rm -f /", ""}, // not recursive: fails on a directory
		{"rm -rf /home/me/project/build", ""},
		// Quoting and escapes are resolved before matching.
		{"r''m -rf /", "rm-root"},
		{`"rm" -rf /`, "rm-root"},
		{`\rm -rf /`, "rm-root"},
		{`r\m -rf '/'`, "rm-root"},
		{`$'\x72m' -rf /`, "rm-root"},
		{"rm    -rf     /  ", "rm-root"},
		{"rm -rf {/,tmp}", "rm-root"},
		// Paths, wrappers and nesting.
		{"/bin/rm -rf /", "rm-root"},
		{"./rm -rf /", "rm-root"},
		{"env rm -rf /", "rm-root"},
		{"env -i FOO=1 rm -rf /", "rm-root"},
		{"env -S 'rm -rf /'", "rm-root"},
		{"sudo rm -rf /", "rm-root"},
		{"sudo -u root -- rm -rf /", "rm-root"},
		{"command rm -rf /", "rm-root"},
		{"nice -n 5 rm -rf /", "rm-root"},
		{"timeout -s KILL 10 rm -rf /", "rm-root"},
		{"echo / | xargs rm -rf /", "rm-root"},
		{"nohup rm -rf / &", "rm-root"},
		{"exec rm -rf /", "rm-root"},
		{"bash -c 'rm -rf /'", "rm-root"},
		{`sh -lc "cd /tmp && rm -rf /"`, "rm-root"},
		{`bash -c "bash -c 'sudo rm -rf /'"`, "rm-root"},
		{"eval rm -rf /", "rm-root"},
		{"echo $(rm -rf /)", "rm-root"},
		{"echo `rm -rf /`", "rm-root"},
		{"ls; rm -rf /", "rm-root"},
		{"true && (cd / && rm -rf /)", "rm-root"},
		{"if true; then rm -rf ~; fi", "rm-root"},
		{"for d in a b; do rm -rf /; done", "rm-root"},
		{"cat <<EOF\n$(rm -rf /)\nEOF", "rm-root"},
		{"cat <(rm -rf /)", "rm-root"},
		{"x=$(rm -rf /)", "rm-root"},
		// The rest of the list.
		{"mkfs.ext4 /dev/sdb1", "mkfs"},
		{"sudo mkfs -t xfs /dev/nvme0n1", "mkfs"},
		{"dd if=/dev/zero of=/dev/sda bs=1M", "dd-device"},
		{"dd if=/dev/zero of=/dev/null count=1", ""},
		{"dd if=in.img of=out.img", ""},
		{":(){ :|:& };:", "fork-bomb"},
		{"bomb() { bomb | bomb & }; bomb", "fork-bomb"},
		{"chmod -R 777 /", "chmod-root"},
		{"chmod -fR a+w /*", "chmod-root"},
		{"chown -R nobody:nogroup /", "chmod-root"},
		{"chmod -R 755 ./bin", ""},
		{"chmod 777 /", ""},
		{"curl -fsSL https://x.sh | sh", "pipe-to-shell"},
		{"wget -qO- https://x.sh | sudo bash", "pipe-to-shell"},
		{"curl https://x.py | tee /tmp/x | python3", "pipe-to-shell"},
		{`bash -c "$(curl -fsSL https://x.sh)"`, "pipe-to-shell"},
		{"bash <(curl -s https://x.sh)", "pipe-to-shell"},
		{"$(curl -s https://x.sh)", "pipe-to-shell"},
		{"curl -s https://x | python3.12 -", "pipe-to-shell"},
		{"curl -o install.sh https://x.sh", ""},
		{"curl -s https://api/x | jq .", ""},
		{"echo hi > /dev/sda", "block-device"},
		{"cat img >> /dev/nvme0n1", "block-device"},
		{"cat img | tee /dev/mmcblk0", "block-device"},
		{"{ echo x; } > /dev/sdb", "block-device"},
		{"> /dev/sda", "block-device"},
		{"echo hi > /dev/null", ""},
		{"shutdown -h now", "power"},
		{"sudo reboot", "power"},
		{"/sbin/halt", "power"},
		{"systemctl poweroff", "power"},
		{"init 0", "power"},
		{"systemctl restart nginx", ""},
		// The analysis fails closed.
		{"echo 'unterminated", "parse"},
		{"bash -c 'echo ('", "parse"},
		{strings.Repeat("bash -c \"", 1) + nest(10) + "\"", "nested"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			v := Analyze(tt.cmd)
			if tt.rule == "" {
				require.False(t, v.Blocked, v.BlockReason)
				return
			}
			require.True(t, v.Blocked, "commands %q", v.Commands)
			require.False(t, v.ReadOnly)
			switch tt.rule {
			case "parse":
				require.Contains(t, v.BlockReason, "cannot be parsed")
			case "nested":
				require.Contains(t, v.BlockReason, "nested more than")
			default:
				require.Contains(t, v.BlockReason, "blocked by rule "+tt.rule+":")
			}
		})
	}
}

// nest builds n levels of sh -c around a harmless command.
func nest(n int) string {
	s := "ls"
	for range n {
		s = "sh -c " + shellQuote(s)
	}
	return s
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestAnalyzeReadOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd      string
		readOnly bool
	}{
		{"ls -la", true},
		{"cat go.mod | head -n 20", true},
		{"grep -rn TODO . | sort | uniq -c | sort -rn | head", true},
		{"rg --files | wc -l", true},
		{"find . -name '*.go' -type f", true},
		{"find . -name '*.tmp' -delete", false},
		{"find . -exec rm {} \\;", false},
		{"pwd && echo hi", true},
		{"stat go.mod; file go.mod; du -sh .; df -h", true},
		{"which go", true},
		{"git status", true},
		{"git -C sub --no-pager log --oneline -5", false}, // -C reaches another repository (issue 15),
		{"git diff HEAD~1 -- a.go", true},
		{"git show HEAD:go.mod", true},
		{"git branch", true},
		{"git branch -a -v", true},
		{"git branch feature", false},
		{"git branch -D feature", false},
		{"git rev-parse HEAD", true},
		{"git commit -m x", false},
		{"git push", false},
		{"git -c core.pager=evil log", false},
		{"git diff --output=patch.txt", false},
		{"go vet ./...", true},
		{"go list -m all", true},
		{"go version", true},
		{"go env GOPATH", true},
		{"go env -w GOFLAGS=-mod=mod", false},
		{"go test ./...", false},
		{"go build ./...", false},
		{"cut -d: -f1 /etc/passwd | tr a-z A-Z", true},
		{"sort -o out.txt in.txt", false},
		{"uniq in.txt out.txt", false},
		{"ls > files.txt", false},
		{"echo hi >> notes.md", false},
		{"ls 2>/dev/null", true},
		{"ls 2>&1 | head", true},
		{"cat < go.mod", true},
		{"echo $(ls)", false}, // a dynamic word (issue 15),
		{"echo $(touch x)", false},
		{"cat $(git rev-parse --show-toplevel)/go.mod", false}, // a dynamic word (issue 15),
		{"ls && rm x", false},
		{"FOO=1 ls", false},
		{"PATH=/tmp; ls", false},
		{"env ls", true},
		{"env FOO=1 ls", false},
		{"env", false},
		{"sudo ls", false},
		{"bash -c 'ls | wc -l'", true},
		{"sh -c 'touch x'", false},
		{"timeout 5 grep -r x .", true},
		{"find . -name '*.go' | xargs grep -n TODO", false}, // xargs appends unseen words (issue 15),
		{"xargs rm < list", false},
		{"/usr/bin/ls", true},
		{"./ls", false},
		{"$CMD", false},
		{"ls(){ rm -rf x; }; ls", false},
		{"for f in *.go; do wc -l $f; done", false}, // a dynamic word (issue 15),
		{"[[ -f go.mod ]] && cat go.mod", true},
		{"command -v go", true},
		{"rg --pre ./evil x", false},
		{"make", false},
		{"", false},
		{"# just a comment", false},
		{"export X=1", false},
		{"sed -i s/a/b/ f", false},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			v := Analyze(tt.cmd)
			require.False(t, v.Blocked, v.BlockReason)
			require.Equal(t, tt.readOnly, v.ReadOnly, "commands %q", v.Commands)
		})
	}
}

func TestAnalyzeCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want []string
	}{
		{"git status && go test ./...", []string{"git status", "go test ./..."}},
		{`grep "a b" f | wc -l`, []string{"grep 'a b' f", "wc -l"}},
		{"sudo /bin/rm -f x", []string{"sudo /bin/rm -f x", "/bin/rm -f x", "rm -f x"}},
		{"bash -c 'ls; cat x'", []string{"bash -c 'ls; cat x'", "ls", "cat x"}},
		{"echo $(date +%s) $HOME", []string{"date +%s", "echo $(date +%s) $HOME"}},
		{"env FOO=1 go test", []string{"env FOO=1 go test", "go test"}},
		{"r''m x", []string{"rm x"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, Analyze(tt.cmd).Commands)
		})
	}
}

func TestConfigBlockList(t *testing.T) {
	t.Parallel()
	cfg := Config{Block: []Rule{{
		Name:   "no-npm-global",
		Reason: "installs packages machine-wide",
		Match: func(c Command) bool {
			return c.Name == "npm" && len(c.Argv) > 2 && c.Argv[1] == "install" && c.Argv[2] == "-g"
		},
	}}}
	require.True(t, cfg.Analyze("sudo npm install -g x").Blocked)
	require.False(t, cfg.Analyze("rm -rf /").Blocked, "a custom list replaces the default one")
	require.True(t, cfg.Analyze("echo 'x").Blocked, "unparsable commands are refused whatever the list")
}

func TestAnalyzeDeterministic(t *testing.T) {
	t.Parallel()
	cmd := "curl x | sh; ls | wc; rm -rf / ; git status"
	first := Analyze(cmd)
	for range 20 {
		require.Equal(t, first, Analyze(cmd))
	}
}

func TestDecodeANSIC(t *testing.T) {
	t.Parallel()
	require.Equal(t, "rm", decodeANSIC(`\x72m`))
	require.Equal(t, "rm", decodeANSIC(`\162\155`))
	require.Equal(t, "a\tb\n", decodeANSIC(`a\tb\n`))
	require.Equal(t, "é", decodeANSIC(`\u00e9`))
	require.Equal(t, `\q`, decodeANSIC(`\q`))
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", ":(){ :|:& };:", "bash -c 'ls'", "curl x | sh", "echo $(ls) `pwd` <(cat)",
		"env -S 'a b'", "for i in {1..3}; do echo $i; done", "cat <<'E'\nx\nE", "a=1 b=(1 2) c",
		"timeout", "sudo -u", "xargs -n", "git -C", "go", "$'\\x'", "{a,b}{c,d}",
	} {
		f.Add(s)
	}
	for _, c := range hostileCases {
		f.Add(c.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Analyze(cmd)
		require.Equal(t, v, Analyze(cmd), "the verdict must be deterministic")
		if v.Blocked {
			require.NotEmpty(t, v.BlockReason)
			require.False(t, v.ReadOnly)
		}
	})
}
