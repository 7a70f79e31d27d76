#!/bin/bash
set -euo pipefail
cd /app
ls -l logs
mkdir -p report
# zcat -f reads the plain and the compressed files alike.
zcat -f logs/app.log logs/app.log.1 logs/app.log.2.gz |
  awk '{
         lvl = ""; svc = ""
         for (i = 1; i <= NF; i++) {
           if ($i ~ /^level=/ && lvl == "") lvl = substr($i, 7)
           if ($i ~ /^service=/ && svc == "") svc = substr($i, 9)
         }
         if (lvl == "ERROR") n[svc]++
       }
       END { for (s in n) printf "%s\t%d\n", s, n[s] }' |
  LC_ALL=C sort -t $'\t' -k2,2nr -k1,1 > report/errors_by_service.tsv
awk -F'\t' '{ t += $2 } END { print t + 0 }' report/errors_by_service.tsv > report/total_errors.txt
cat report/errors_by_service.tsv report/total_errors.txt
