#!/usr/bin/env bash
# The main job, on one machine: the embedded Temporal server with its Web
# UI, a worker on a demo workspace, and a session that asks for approval.
# With no OPENAI_API_KEY it uses the scripted demo model and says so.
#
# The demo workspace is a git repository of its own under the state
# directory, made on the first run (a README, a first commit tagged
# longrun-demo-base): the session's checkout and its branch are that
# repository's, never the Longrun clone's, whose git the demo never
# touches. Each session starts from the tag, so every run has the same
# work to do whatever a run before left. The demo ends with `longrun
# diff` of what the session changed, and exits 1, loudly, when the
# session did not complete or its diff does not hold NOTES.md.
#
# Settings (environment): LONGRUN_PORT (7233), LONGRUN_UI_PORT (8233),
# LONGRUN_STATE (.longrun), LONGRUN_MODEL, OPENAI_BASE_URL,
# OPENAI_API_KEY; DEMO_EXIT=1 stops everything when the session ends
# instead of leaving the UI up; BIN and DEVSERVER name the programs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.longrun-bin}
DEVSERVER=${DEVSERVER:-$BIN/devserver}
# The CLI `make install` puts on the PATH as longrun.
LONGRUN=$BIN/starter
PORT=${LONGRUN_PORT:-7233}
UI_PORT=${LONGRUN_UI_PORT:-8233}
STATE=${LONGRUN_STATE:-$ROOT/.longrun}
WORKSPACE=$STATE/demo-workspace
BASE_TAG=longrun-demo-base
# The worker's own state (transcripts, job logs, spilled output, the
# sessions' checkouts) beside the workspace, never inside it.
WORKER_STATE=$STATE/worker-state
LOGS=$STATE/logs

fail() {
  echo >&2
  echo "!!! make demo FAILED: $*" >&2
  exit 1
}

# demo_git runs git in the demo workspace as the demo, whatever the
# person's own settings: no identity needed, no signing, no hooks.
demo_git() {
  git -C "$WORKSPACE" -c user.name="Longrun demo" -c user.email=demo@longrun.invalid \
    -c commit.gpgsign=false -c tag.gpgsign=false "$@"
}

# The workspace, a repository of its own. A directory a run of an older
# demo left (no .git) becomes one, its README committed; what else it
# holds stays out of the commit, so the session still has NOTES.md to
# write.
if [[ -e $WORKSPACE && ! ( -d $WORKSPACE && -r $WORKSPACE && -w $WORKSPACE && -x $WORKSPACE ) ]]; then
  fail "the demo workspace $WORKSPACE cannot be read and written: give it back its permissions (chmod u+rwx) or remove it; the next run makes it again"
fi
mkdir -p "$WORKSPACE" "$LOGS"
if [[ ! -e $WORKSPACE/.git ]]; then
  git init -q "$WORKSPACE" || fail "git init $WORKSPACE failed"
  [[ -f $WORKSPACE/README.md ]] || printf '# Demo workspace\n\nLongrun'"'"'s demo session works here.\n' >"$WORKSPACE/README.md"
  demo_git add README.md
  demo_git commit -q --no-verify -m "Longrun demo workspace" || fail "the first commit of $WORKSPACE failed"
  demo_git tag "$BASE_TAG"
  echo "Made the demo workspace $WORKSPACE, a git repository of its own."
fi
base_args=()
if demo_git rev-parse --quiet --verify "refs/tags/$BASE_TAG^{commit}" >/dev/null; then
  base_args=(--base "$BASE_TAG")
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$DEVSERVER" --port "$PORT" --ui-port "$UI_PORT" --db "$STATE/temporal.db" >"$LOGS/devserver.out" 2>"$LOGS/devserver.log" &
pids+=($!)
for _ in $(seq 1 120); do
  grep -q "devserver ready" "$LOGS/devserver.out" 2>/dev/null && break
  if ! kill -0 "${pids[0]}" 2>/dev/null; then
    echo "devserver exited; see $LOGS/devserver.log" >&2; tail -5 "$LOGS/devserver.log" >&2; exit 1
  fi
  sleep 0.5
done
grep "devserver ready" "$LOGS/devserver.out" || fail "devserver not ready after 60s; see $LOGS/devserver.log"
export TEMPORAL_ADDRESS=127.0.0.1:$PORT
# A second terminal (longrun, the worker, the temporal CLI) needs the
# address whenever the port is not the default one.
echo "Temporal is at $TEMPORAL_ADDRESS. In a second terminal first run:"
echo "  export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS"
echo "(longrun below is $LONGRUN; make install puts it on the PATH.)"

worker_args=(--workspace "$WORKSPACE" --state-dir "$WORKER_STATE")
if [[ -z "${OPENAI_API_KEY:-}" ]]; then
  echo "No OPENAI_API_KEY set: using the scripted demo model (offline, no live model is called)."
  worker_args+=(--scripted-model demo)
else
  echo "Using the model at ${OPENAI_BASE_URL:-https://api.openai.com/v1} (${LONGRUN_MODEL:-model from the session})."
fi
"$BIN/worker" "${worker_args[@]}" 2>"$LOGS/worker.log" &
pids+=($!)
# start checks for a worker: wait until this one polls, so it does not
# warn that nobody listens.
for _ in $(seq 1 120); do
  grep -q "worker started" "$LOGS/worker.log" 2>/dev/null && break
  if ! kill -0 "${pids[1]}" 2>/dev/null; then
    tail -5 "$LOGS/worker.log" >&2
    fail "the worker did not start; see $LOGS/worker.log"
  fi
  sleep 0.5
done

# Started from the workspace: the session works where it is started.
ID=$(cd "$WORKSPACE" && "$LONGRUN" start ${base_args[@]+"${base_args[@]}"} "List the workspace, write NOTES.md about it, then check it with the shell.") ||
  fail "longrun start failed"
echo "Session $ID started in $WORKSPACE."
echo "Web UI: http://127.0.0.1:$UI_PORT/namespaces/default/workflows/$ID"

# Waits until the session asks; one that ends first (or a worker that
# exits) gets no approval, and watch below says how it ended.
asked=
for _ in $(seq 1 60); do
  if "$LONGRUN" pending "$ID" --json 2>/dev/null | grep -q call_id; then asked=1; break; fi
  if ! kill -0 "${pids[1]}" 2>/dev/null; then
    tail -5 "$LOGS/worker.log" >&2
    fail "the worker exited; see $LOGS/worker.log"
  fi
  sleep 0.5
done
if [[ -n $asked ]]; then
  echo
  "$LONGRUN" pending "$ID" || true
  echo
  if [[ -z "${OPENAI_API_KEY:-}" ]]; then
    echo "Approving as the demo's person would: longrun approve $ID --all"
    "$LONGRUN" approve "$ID" --all || fail "longrun approve $ID --all failed"
  else
    echo "Approve or deny from another terminal (TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS):"
    echo "  $LONGRUN approve $ID --all     or     $LONGRUN deny $ID --all --feedback '...'"
  fi
fi
echo
"$LONGRUN" watch "$ID" || fail "session $ID did not complete (above: how it ended; $LONGRUN status $ID says more, $LOGS/worker.log has the worker's side)"
echo
# The session worked in a checkout of its own: what it changed is its
# branch of the workspace's repository, nothing in the workspace yet.
echo "What the session changed, on its branch of $WORKSPACE (longrun diff $ID):"
diff=$("$LONGRUN" diff "$ID") || fail "longrun diff $ID failed"
printf '%s\n' "$diff"
if ! grep -q '^+++ b/NOTES.md$' <<<"$diff"; then
  fail "session $ID completed, but its diff does not write NOTES.md, which it was asked to: it did not do what the demo is for"
fi
echo
echo "The demo worked: the session wrote NOTES.md on its own branch, after your approval."
echo "  bring it into $WORKSPACE:  (cd $WORKSPACE && $LONGRUN apply $ID)     or drop it:  $LONGRUN discard $ID"
if [[ "${DEMO_EXIT:-}" == "1" ]]; then exit 0; fi
echo
echo "The Temporal Web UI stays up at http://127.0.0.1:$UI_PORT (state in $STATE/temporal.db). Ctrl-C to stop."
echo "From another terminal: export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS; then e.g. $LONGRUN list"
wait "${pids[0]}"
