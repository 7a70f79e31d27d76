#!/bin/bash
set -euo pipefail
cd /app/etc
cat -A service.conf | head -40
cp -p service.conf service.conf.orig
# Section-scoped edits: sed address ranges from a section header to the next header.
sed -i \
  -e '/^\[general\]/,/^\[/ s/^environment = .*/environment = production/' \
  -e '/^\[server\]/,/^\[/ {
        s/^port = .*/port = 8443/
        s/^#tls_enabled = .*/tls_enabled = true/
        s/^workers = .*/workers = 8/
        s/^timeout = 30$/&\nmax_connections = 500/
      }' \
  -e '/^\[metrics\]/,/^\[/ s/^enabled = .*/enabled = true/' \
  -e '/^[[:space:]]*debug[[:space:]]*=/d' \
  service.conf
diff service.conf.orig service.conf || true
