#!/usr/bin/env bash
# Installs Debian's Chromium for the dashboard's browser tests (idempotent).
# playwright-core drives it by its path; it downloads no browser of its own.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium from Debian packages" >&2
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >&2
fi
dpkg-query -W -f='chromium ${Version}\n' chromium >&2 2>/dev/null || chromium --version >&2
