#!/bin/bash
set -euo pipefail
cd /app
find data bin -type f | sort
cat bin/cleanup_tmp.sh
mkdir -p bin cron logs
cat > bin/backup.sh <<'SH'
#!/bin/bash
# Nightly backup of SOURCE_DIR into DEST_DIR, keeping the KEEP newest archives.
set -euo pipefail
SOURCE_DIR=${SOURCE_DIR:-/app/data}
DEST_DIR=${DEST_DIR:-/app/backups}
KEEP=${KEEP:-7}

if [ ! -d "$SOURCE_DIR" ]; then
  echo "backup.sh: source directory $SOURCE_DIR does not exist" >&2
  exit 1
fi
mkdir -p "$DEST_DIR"
archive="$DEST_DIR/data-$(date +%Y%m%d-%H%M%S).tar.gz"
tar -C "$SOURCE_DIR" --exclude='*.tmp' --exclude='cache' -czf "$archive" .

# Names embed the timestamp, so lexical order is chronological: drop all but the newest KEEP.
find "$DEST_DIR" -maxdepth 1 -type f -name 'data-*.tar.gz' -printf '%f\n' | LC_ALL=C sort -r |
  tail -n +"$((KEEP + 1))" | while IFS= read -r old; do
    rm -f -- "$DEST_DIR/$old"
  done
echo "$archive"
SH
chmod +x bin/backup.sh
cat > cron/backup.cron <<'CRON'
SHELL=/bin/bash
MAILTO=""
# m  h    dom mon dow  command
30   2    *   *   *    /app/bin/backup.sh >> /app/logs/backup.log 2>&1
0    4    1   *   *    KEEP=30 /app/bin/backup.sh >> /app/logs/backup.log 2>&1
*/15 8-18 *   *   1-5  /app/bin/cleanup_tmp.sh
CRON
SOURCE_DIR=/app/data DEST_DIR=/tmp/backup-check bin/backup.sh
tar -tzf /tmp/backup-check/data-*.tar.gz
rm -rf /tmp/backup-check
