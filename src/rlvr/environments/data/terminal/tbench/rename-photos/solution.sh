#!/bin/bash
set -euo pipefail
cd /app
find photos -type f | LC_ALL=C sort
re_img='^IMG_([0-9]{8})_([0-9]{6})\.([jJ][pP][eE]?[gG])$'
re_pxl='^PXL_([0-9]{8})_([0-9]{6})[0-9]{3}\.([jJ][pP][eE]?[gG])$'
# NUL-separated and sorted byte-wise, so that collisions are numbered in C-locale path order.
find photos -type f -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' path; do
  base=${path##*/}
  if [[ $base =~ $re_img || $base =~ $re_pxl ]]; then
    day=${BASH_REMATCH[1]} time=${BASH_REMATCH[2]}
    dir="sorted/${day:0:4}/${day:4:2}"
    mkdir -p "$dir"
    dest="$dir/$day-$time.jpg"
    n=2
    while [ -e "$dest" ]; do
      dest="$dir/$day-$time-$n.jpg"
      n=$((n + 1))
    done
    mv -- "$path" "$dest"
    echo "$path -> $dest"
  fi
done
find sorted -type f | LC_ALL=C sort
