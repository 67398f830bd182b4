#!/usr/bin/env bash
# The main job, on one machine: the embedded Temporal server with its Web
# UI, a worker on a demo workspace, and a session that asks for approval.
# With no OPENAI_API_KEY it uses the scripted demo model and says so.
#
# Settings (environment): LONGRUN_PORT (7233), LONGRUN_UI_PORT (8233),
# LONGRUN_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY; DEMO_EXIT=1 stops
# everything when the session ends instead of leaving the UI up.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.longrun-bin}
DEVSERVER=${DEVSERVER:-$BIN/devserver}
PORT=${LONGRUN_PORT:-7233}
UI_PORT=${LONGRUN_UI_PORT:-8233}
STATE=${LONGRUN_STATE:-$ROOT/.longrun}
WORKSPACE=$STATE/demo-workspace
# The worker's own state (transcripts, job logs, spilled output) beside
# the workspace, never inside it.
WORKER_STATE=$STATE/worker-state
LOGS=$STATE/logs
mkdir -p "$WORKSPACE" "$LOGS"

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
grep "devserver ready" "$LOGS/devserver.out" || { echo "devserver not ready after 60s" >&2; exit 1; }
export TEMPORAL_ADDRESS=127.0.0.1:$PORT
# A second terminal (longrun, the worker, the temporal CLI) needs the
# address whenever the port is not the default one.
echo "Temporal is at $TEMPORAL_ADDRESS. In a second terminal first run:"
echo "  export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS"

if [[ -z "${OPENAI_API_KEY:-}" ]]; then
  echo "No OPENAI_API_KEY set: using the scripted demo model (offline, no live model is called)."
  "$BIN/worker" --workspace "$WORKSPACE" --state-dir "$WORKER_STATE" --scripted-model demo 2>"$LOGS/worker.log" &
else
  echo "Using the model at ${OPENAI_BASE_URL:-https://api.openai.com/v1} (${LONGRUN_MODEL:-model from the session})."
  "$BIN/worker" --workspace "$WORKSPACE" --state-dir "$WORKER_STATE" 2>"$LOGS/worker.log" &
fi
pids+=($!)
# start checks for a worker: wait until this one polls, so it does not
# warn that nobody listens.
for _ in $(seq 1 120); do
  grep -q "worker started" "$LOGS/worker.log" 2>/dev/null && break
  kill -0 "${pids[1]}" 2>/dev/null || { echo "worker exited; see $LOGS/worker.log" >&2; tail -5 "$LOGS/worker.log" >&2; exit 1; }
  sleep 0.5
done

[[ -f "$WORKSPACE/README.md" ]] || printf '# Demo workspace\n\nLongrun'"'"'s demo session works here.\n' >"$WORKSPACE/README.md"
ID=$("$BIN/starter" start --workdir . "List the workspace, write NOTES.md about it, then check it with the shell.")
echo "Session $ID started."
echo "Web UI: http://127.0.0.1:$UI_PORT/namespaces/default/workflows/$ID"

for _ in $(seq 1 60); do
  if "$BIN/starter" pending "$ID" --json 2>/dev/null | grep -q call_id; then break; fi
  sleep 0.5
done
echo
"$BIN/starter" pending "$ID"
echo
if [[ -z "${OPENAI_API_KEY:-}" ]]; then
  echo "Approving as the demo's person would: starter approve $ID --all"
  "$BIN/starter" approve "$ID" --all
else
  echo "Approve or deny from another terminal (TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS):"
  echo "  $BIN/starter approve $ID --all     or     $BIN/starter deny $ID --all --feedback '...'"
fi
echo
"$BIN/starter" watch "$ID"
echo
# The session worked in a copy of its own (the demo workspace is not a git
# repository; in one it would be a branch): what it changed comes back
# with starter apply.
echo "What the session changed, in its own copy: $BIN/starter diff $ID"
# From the workspace: apply refuses to run from inside another repository
# (this clone), which the person most likely did not mean.
(cd "$WORKSPACE" && "$BIN/starter" apply "$ID") || true
echo
echo "NOTES.md in $WORKSPACE:"
cat "$WORKSPACE/NOTES.md" 2>/dev/null || echo "(not written)"
if [[ "${DEMO_EXIT:-}" == "1" ]]; then exit 0; fi
echo
echo "The Temporal Web UI stays up at http://127.0.0.1:$UI_PORT (state in $STATE/temporal.db). Ctrl-C to stop."
echo "From another terminal: export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS; then e.g. $BIN/starter list"
wait "${pids[0]}"
