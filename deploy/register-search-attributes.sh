#!/bin/sh
# Registers Longrun's custom search attributes in a namespace, once the
# namespace exists. Idempotent: attributes already present are left alone,
# so the one-shot compose service can run on every `docker compose up`.
#
# Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, and LONGRUN_SEARCH_ATTRIBUTES,
# a space-separated list of Name=Type (Type as the temporal CLI spells it).
set -eu

: "${TEMPORAL_ADDRESS:?}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${LONGRUN_SEARCH_ATTRIBUTES:?}"

# auto-setup creates the namespace after the frontend is already serving.
tries=0
until temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 90 ]; then
    echo "namespace $TEMPORAL_NAMESPACE never appeared at $TEMPORAL_ADDRESS" >&2
    exit 1
  fi
  echo "waiting for namespace $TEMPORAL_NAMESPACE at $TEMPORAL_ADDRESS"
  sleep 2
done

existing=$(temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE")
for pair in $LONGRUN_SEARCH_ATTRIBUTES; do
  name=${pair%%=*}
  type=${pair#*=}
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name already registered"
    continue
  fi
  echo "registering search attribute $name ($type)"
  # Some CLI versions ask for confirmation; answer it.
  echo y | temporal operator search-attribute create \
    --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
    --name "$name" --type "$type"
done
echo "search attributes ready in $TEMPORAL_NAMESPACE"
