#!/bin/bash
set -euo pipefail
cd /app
mkdir -p bin
cat > bin/rotate.sh <<'SH'
#!/bin/bash
# rotate.sh LOGFILE [KEEP]: copytruncate-style rotation with gzip-compressed copies.
set -euo pipefail
log=${1:?usage: rotate.sh LOGFILE [KEEP]}
keep=${2:-5}

[ -s "$log" ] || exit 0

rm -f -- "$log.$keep.gz"
for ((i = keep - 1; i >= 1; i--)); do
  if [ -e "$log.$i.gz" ]; then
    mv -f -- "$log.$i.gz" "$log.$((i + 1)).gz"
  fi
done
gzip -c -- "$log" > "$log.1.gz"
: > "$log"   # truncate in place: same inode
SH
chmod +x bin/rotate.sh
wc -l var/log/worker.log
bin/rotate.sh var/log/worker.log
ls -l var/log
zcat var/log/worker.log.1.gz | tail -2
