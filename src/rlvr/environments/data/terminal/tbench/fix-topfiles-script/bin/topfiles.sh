#!/bin/bash
# topfiles.sh DIR [N]
# Print the N (default 5) largest regular files under DIR, biggest first,
# as "SIZE<TAB>PATH" with PATH relative to DIR.

dir=$1
n=${2:-5}

if [ ! -d $dir ]; then
    echo "usage: topfiles.sh DIR [N]"
    exit 1
fi

for f in $(find $dir -type f); do
    size=$(stat -c %s $f)
    printf '%s\t%s\n' "$size" "${f#$dir/}"
done | sort -r | head -n "$n"
