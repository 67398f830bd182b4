#!/bin/sh
# Creates the namespace Longrun runs in, then registers the custom search
# attributes sessions upsert (a workflow that upserts an unregistered one
# fails its task). The waiting and the namespace step follow Temporal's
# example, temporalio/samples-server compose/scripts/create-namespace.sh.
#
# Only Longrun's own attributes are registered: the deprecated auto-setup
# image also added its Custom*Field set, which took PostgreSQL's three Int
# columns and left LongrunTokens refused ("cannot have more than 3 search
# attribute of type Int"). composetest checks the counts against the limits.
#
# Idempotent: an existing namespace or attribute is left alone.
#
# Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_NAMESPACE_RETENTION,
# LONGRUN_SEARCH_ATTRIBUTES (space-separated Name=Type, Type as the temporal
# CLI spells it), and, under docker-compose.tls.yml, the CLI's TEMPORAL_TLS_*.
set -eu

: "${TEMPORAL_ADDRESS:?}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${TEMPORAL_NAMESPACE_RETENTION:=72h}"
: "${LONGRUN_SEARCH_ATTRIBUTES:?}"
max=${TEMPORAL_HEALTH_CHECK_MAX_ATTEMPTS:-60}
pause=${TEMPORAL_HEALTH_CHECK_SLEEP_SECONDS:-5}

attempt=1
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  if [ "$attempt" -ge "$max" ]; then
    echo "Temporal at $TEMPORAL_ADDRESS did not become healthy after $max attempts" >&2
    exit 1
  fi
  echo "waiting for Temporal at $TEMPORAL_ADDRESS (attempt $attempt/$max)"
  attempt=$((attempt + 1))
  sleep "$pause"
done

attempt=1
until temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; do
  if temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" --retention "$TEMPORAL_NAMESPACE_RETENTION"; then
    echo "namespace $TEMPORAL_NAMESPACE created"
    break
  fi
  if [ "$attempt" -ge "$max" ]; then
    echo "could not create namespace $TEMPORAL_NAMESPACE after $max attempts" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep "$pause"
done

existing=$(temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE")
added=0
for pair in $LONGRUN_SEARCH_ATTRIBUTES; do
  name=${pair%%=*}
  type=${pair#*=}
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name already registered"
    continue
  fi
  echo "registering search attribute $name ($type)"
  temporal operator search-attribute create \
    --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
    --name "$name" --type "$type"
  added=1
done
if [ "$added" = 1 ]; then
  # The frontend's namespace cache refreshes every 10 s; an upsert of a new
  # attribute before then fails its workflow task (retried, but noisy).
  sleep 11
fi
echo "namespace $TEMPORAL_NAMESPACE ready with Longrun's search attributes"
