#!/usr/bin/env bash
# Installs and starts a local PostgreSQL for the test suite (idempotent), then
# prints the test database URL on stdout. Runs as root on Debian.
set -euo pipefail
# su keeps the working directory, which the postgres user may not be allowed to enter.
cd /
if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /usr/lib/postgresql 2>/dev/null)" ]; then
  echo "installing postgresql from Debian packages" >&2
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
fi
V=$(ls /usr/lib/postgresql | sort -V | tail -1)
pg_lsclusters | grep -q "^$V *main" || pg_createcluster "$V" main >&2
pg_ctlcluster "$V" main status >/dev/null 2>&1 || pg_ctlcluster "$V" main start >&2
pg_isready -h 127.0.0.1 -t 30 >&2
su postgres -c "psql -tAc \"SELECT 1 FROM pg_roles WHERE rolname='orchestra'\"" | grep -q 1 \
  || su postgres -c "psql -v ON_ERROR_STOP=1 -c \"CREATE ROLE orchestra LOGIN PASSWORD 'orchestra' CREATEDB\"" >&2
# Each test drops its database WITH (FORCE); that must also end an autovacuum
# worker that happens to be in it, which takes pg_signal_backend.
su postgres -c "psql -v ON_ERROR_STOP=1 -c 'GRANT pg_signal_backend TO orchestra'" >&2
su postgres -c "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='orchestra_test'\"" | grep -q 1 \
  || su postgres -c "psql -v ON_ERROR_STOP=1 -c 'CREATE DATABASE orchestra_test OWNER orchestra'" >&2
echo "postgresql://orchestra:orchestra@127.0.0.1:5432/orchestra_test"
