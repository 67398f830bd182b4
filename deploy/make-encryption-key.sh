#!/bin/sh
# Writes a first payload-encryption key to $LONGRUN_ENCRYPTION_KEYS when the
# file is absent or empty, so the stack encrypts from its first start. An
# existing file is never touched: rotation is the operator's (README,
# "Key rotation"): put a new KEYID=BASE64 line first, keep the old lines.
set -eu
: "${LONGRUN_ENCRYPTION_KEYS:?}"
if [ -s "$LONGRUN_ENCRYPTION_KEYS" ]; then
  echo "encryption keys present in $LONGRUN_ENCRYPTION_KEYS"
  exit 0
fi
umask 077
tmp="$LONGRUN_ENCRYPTION_KEYS.tmp"
printf 'k%s=%s\n' "$(date -u +%Y%m%d%H%M%S)" "$(head -c 32 /dev/urandom | base64 | tr -d '\n')" >"$tmp"
mv "$tmp" "$LONGRUN_ENCRYPTION_KEYS"
echo "wrote a new encryption key to $LONGRUN_ENCRYPTION_KEYS: back it up, payloads cannot be read without it"
