#!/bin/sh
# Makes a test CA, a certificate for the Temporal server (frontend and
# internode) and one client certificate for the worker, the UI, the starter
# and the admin-tools jobs, for docker-compose.tls.yml. After Temporal's
# example, temporalio/samples-server tls/tls-simple/generate-test-certs.sh,
# with the server named `temporal` (its compose service) so clients verify
# the host name.
#
# Test material: for a real deployment use certificates from your own CA,
# with the same file names in the same directory.
#
# Usage: deploy/tls/make-certs.sh [DIR]   (default deploy/tls/certs)
set -eu

dir=${1:-$(dirname "$0")/certs}
days=${LONGRUN_CERT_DAYS:-365}
mkdir -p "$dir"
cd "$dir"
if [ -e ca.pem ]; then
  echo "$dir/ca.pem exists; remove $dir to make new certificates" >&2
  exit 1
fi

cat >server.conf <<'CONF'
[req]
prompt = no
default_md = sha256
req_extensions = req_ext
distinguished_name = dn
[dn]
O = Longrun test cluster
CN = temporal
[req_ext]
subjectAltName = DNS:temporal,DNS:localhost,IP:127.0.0.1,IP:::1
extendedKeyUsage = serverAuth,clientAuth
CONF
cat >client.conf <<'CONF'
[req]
prompt = no
default_md = sha256
req_extensions = req_ext
distinguished_name = dn
[dn]
O = Longrun test client
CN = longrun
[req_ext]
extendedKeyUsage = clientAuth
CONF

openssl genrsa -out ca.key 4096
openssl req -new -x509 -key ca.key -sha256 -subj "/O=Longrun test CA" -days "$days" -out ca.pem

# The server's certificate serves the frontend and the internode traffic,
# and is the internal client certificate too (hence clientAuth).
openssl genrsa -out server.key 4096
openssl req -new -key server.key -out server.csr -config server.conf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days "$days" -sha256 -extfile server.conf -extensions req_ext

openssl genrsa -out client.key 4096
openssl req -new -key client.key -out client.csr -config client.conf
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem \
  -days "$days" -sha256 -extfile client.conf -extensions req_ext

rm -f server.csr client.csr server.conf client.conf ca.srl
# The containers run as their own users (temporal, the UI's, longrun), so
# the keys they use must be readable by them; the CA key is not mounted.
chmod 0644 server.key client.key
chmod 0600 ca.key
echo "certificates in $dir: ca.pem, server.pem/server.key, client.pem/client.key (ca.key: keep it off the stack)"
