#!/bin/bash
set -euo pipefail
cd /app
cat run/worker.pid bin/worker.sh
cat > bin/watchdog.sh <<'SH'
#!/bin/bash
# watchdog.sh PIDFILE LOGFILE COMMAND [ARGS...]: restart COMMAND unless PIDFILE names a live process.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: watchdog.sh PIDFILE LOGFILE COMMAND [ARGS...]" >&2
  exit 2
fi
pidfile=$1 logfile=$2
shift 2

pid=$(head -n 1 "$pidfile" 2>/dev/null | tr -d '[:space:]')
if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
  exit 0
fi

# & starts COMMAND itself as the background child ($! is its PID); setsid detaches it from our session.
setsid "$@" < /dev/null > /dev/null 2>&1 &
newpid=$!
echo "$newpid" > "$pidfile"
echo "$(date +%Y-%m-%dT%H:%M:%S) restarted pid=$newpid" >> "$logfile"
exit 0
SH
chmod +x bin/watchdog.sh
# Try it on a throwaway pidfile, then clean up what it started.
bin/watchdog.sh /tmp/demo.pid /tmp/demo.log sleep 30
cat /tmp/demo.pid /tmp/demo.log
bin/watchdog.sh /tmp/demo.pid /tmp/demo.log sleep 30
wc -l < /tmp/demo.log
kill "$(cat /tmp/demo.pid)"
rm -f /tmp/demo.pid /tmp/demo.log
