#!/bin/bash
set -euo pipefail
cd /app
cat -n bin/topfiles.sh
bin/topfiles.sh sample 3 || true
# Bugs: word splitting of paths with spaces (for over $(find) and unquoted $f),
# a lexicographic reverse sort without tie-break, and the usage error going
# to stdout with status 1.
cat > bin/topfiles.sh <<'SH'
#!/bin/bash
# topfiles.sh DIR [N]
# Print the N (default 5) largest regular files under DIR, biggest first,
# as "SIZE<TAB>PATH" with PATH relative to DIR.

dir=${1:-}
n=${2:-5}

if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "usage: topfiles.sh DIR [N]" >&2
    exit 2
fi

find "$dir" -type f -printf '%s\t%P\n' |
    LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2 |
    head -n "$n"
exit 0
SH
chmod +x bin/topfiles.sh
bin/topfiles.sh sample 3
bin/topfiles.sh /nonexistent || echo "exit $?"
