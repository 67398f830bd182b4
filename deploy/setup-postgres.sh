#!/bin/sh
# Creates and migrates Temporal's two PostgreSQL databases (persistence and
# visibility) with the server's own schema tool, temporal-sql-tool, from the
# admin-tools image. This is Temporal's published example, followed line for
# line: temporalio/samples-server compose/scripts/setup-postgres.sh (commit
# b7bc4c5, April 2026; temporalio/docker-compose is archived and points there).
#
# Safe to run on every `docker compose up`: `create` ignores an existing
# database, `setup-schema -v 0.0` leaves a newer recorded version alone, and
# `update-schema` applies only the versioned steps a database lacks, which is
# also how an image upgrade migrates the schemas.
#
# Env: POSTGRES_SEEDS, POSTGRES_USER, DB_PORT, SQL_PASSWORD (read by the tool).
set -eu

: "${POSTGRES_SEEDS:?ERROR: POSTGRES_SEEDS environment variable is required}"
: "${POSTGRES_USER:?ERROR: POSTGRES_USER environment variable is required}"

echo 'Starting PostgreSQL schema setup...'
nc -z -w 10 "${POSTGRES_SEEDS}" "${DB_PORT:-5432}"

sql() {
  temporal-sql-tool --plugin postgres12 --ep "${POSTGRES_SEEDS}" -u "${POSTGRES_USER}" -p "${DB_PORT:-5432}" "$@"
}

sql --db temporal create
sql --db temporal setup-schema -v 0.0
sql --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned

sql --db temporal_visibility create
sql --db temporal_visibility setup-schema -v 0.0
sql --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned

echo 'PostgreSQL schema setup complete'
