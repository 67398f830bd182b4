#!/usr/bin/env bash
# bench.sh times the grep tool's Search (through tools/internal/grepbench)
# against ripgrep on the same queries over $(go env GOROOT)/src, with
# hyperfine, and prints a markdown table for docs/benchmarks-grep.md.
# Needs rg and hyperfine: apt-get install -y ripgrep hyperfine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root="${ROOT:-$(go env GOROOT)/src}"
runs="${RUNS:-20}"
bin="$(mktemp -d)/grepbench"
go build -o "$bin" ./tools/internal/grepbench
json="$(mktemp)"
queries=('func main' 'func \w+\(ctx context\.Context' '-i func main')

median_ms() { # hyperfine JSON file, command index
	python3 -c 'import json,sys,statistics as s; r=json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]; print("%.1f" % (s.median(r["times"])*1000))' "$1" "$2"
}

echo "| query | ours (median ms) | rg (median ms) | ratio | our command | rg command |"
echo "|---|---:|---:|---:|---|---|"
for q in "${queries[@]}"; do
	flag=""
	pat="$q"
	if [[ "$q" == -i\ * ]]; then flag="-i"; pat="${q#-i }"; fi
	ours="$bin $flag '$pat' $root"
	rg="rg -n --hidden $flag '$pat' $root"
	hyperfine -N -w 3 -r "$runs" --export-json "$json" "$ours" "$rg" >/dev/null 2>&1
	o="$(median_ms "$json" 0)"
	r="$(median_ms "$json" 1)"
	ratio="$(python3 -c "print('%.2f' % ($o/$r))")"
	echo "| \`$q\` | $o | $r | $ratio | \`$ours\` | \`$rg\` |"
done
