package main

// examples are shown by `COMMAND --help`, one command line each, without
// the program name. Every command has some: people learn a CLI from its
// examples before its flags.
var examples = map[string][]string{
	"start": {
		`start "fix the failing test in tools/"`,
		`start --profile plan --id review-1 "review the last commit"`,
		`start --allow 'shell:go test *' --wait "make the tests pass"`,
		`start --approval none --max-turns 20 "update the docs"   # unattended: asks are denied`,
		`start --idle-timeout forever --token-budget 2000000 "keep the migration going"   # waits for you for days, stops at 2M tokens`,
		`start --local-reads --local-model "summarise the repo"   # fastest turns, for a fast local model`,
	},
	"send":    {`send session-1 "now run the tests"`, `send session-1 -- "-v is not a flag here"`},
	"approve": {`approve session-1 call_abc`, `approve session-1 --all`, `approve session-1 call_abc --remember --pattern 'go test *'`},
	"deny":    {`deny session-1 call_abc --feedback "don't touch go.mod"`, `deny session-1 --all --feedback "stop and explain"`},
	"pending": {`pending session-1`, `pending --all`, `pending session-1 --json | jq -r '.[].call_id'`},
	"status":  {`status session-1`, `status session-1 --json`},
	"conversation": {
		`conversation session-1`, `conversation session-1 --json | jq '.[-1]'`,
	},
	"watch": {
		`watch session-1                     # on a terminal: colour, a spinner, and y/n/f/s for each approval`,
		`watch session-1 --no-interactive    # only announce approvals; decide them elsewhere`,
		`watch session-1 --json              # one JSON event a line`,
		`watch session-1 | tee session-1.log # piped: plain text, no prompt`,
	},
	"interrupt": {`interrupt session-1`},
	"cancel":    {`cancel session-1`},
	"result":    {`result session-1`, `result session-1 --json`},
	"diff":      {`diff session-1`, `diff session-1 | git apply --stat`},
	"apply":     {`apply session-1`, `apply session-1 --to ../other-checkout`},
	"discard":   {`discard session-1`},
	"push":      {`push session-1`, `LONGRUN_PUSH_REMOTE=origin LONGRUN_FORGE_TOKEN_FILE=~/.forge-token push session-1 --json`},
	"checkouts": {`checkouts`, `checkouts --state-dir /var/lib/longrun --json`},
	"list": {
		`list`,
		`list --waiting                      # sessions needing a person`,
		`list --running --json`,
		`list --phase waiting-input`,
		`list --query 'LongrunTokens > 100000'`,
	},
	"show":    {`show session-1`, `show session-1 --messages 20`, `show session-1 --json`},
	"history": {`history session-1`, `history session-1 --json > session-1.json   # replayable with worker.NewWorkflowReplayer`},
	"schedule": {
		`schedule create nightly --cron "0 3 * * *" --prompt "run the tests and fix what fails"`,
		`schedule list`,
		`schedule show nightly`,
		`schedule trigger nightly`,
		`schedule pause nightly --note "release freeze"`,
		`schedule delete nightly`,
	},
	"schedule create": {
		`schedule create nightly --cron "0 3 * * *" --jitter 10m --prompt "run the tests and fix what fails"`,
		`schedule create deps --every 6h --profile plan --prompt "list outdated dependencies"`,
		`schedule create docs --every 24h --approval none --allow 'shell:go test *' --prompt "update the docs"   # unattended`,
		`schedule create weekly --cron "0 9 * * MON" --paused --note "enable after review" --prompt "summarise last week's commits"`,
	},
	"schedule list":    {`schedule list`, `schedule list --json`, `schedule list --quiet`},
	"schedule show":    {`schedule show nightly`, `schedule show nightly --json | jq -r '.recent_actions[].session_id'`},
	"schedule delete":  {`schedule delete nightly`},
	"schedule pause":   {`schedule pause nightly --note "release freeze"`},
	"schedule unpause": {`schedule unpause nightly`},
	"schedule trigger": {`schedule trigger nightly`, `schedule trigger nightly --overlap allow-all   # even while the last session runs`},
	"completion":       {`completion bash > /etc/bash_completion.d/longrun`, `source <(longrun completion bash)`, `source <(longrun completion zsh)`},
	"codec-server":     {`codec-server --encryption-keys /etc/longrun/keys --origin http://localhost:8233 --token-file /etc/longrun/codec-token`, `codec-server --encryption-keys keys --listen 127.0.0.1:8081 --no-token --origin http://localhost:8233`},
	"console": {
		`console                                   # http://127.0.0.1:8082; open the login URL it prints`,
		`console --token-file ~/.config/longrun/console-token --listen 0.0.0.0:8082`,
		`console --trusted-proxy-header X-Forwarded-User --token-file F   # behind an authenticating proxy that sends F's token as its bearer`,
		`console --origin https://longrun.example.com   # behind a proxy publishing it there (that host is allowed too)`,
	},
}
