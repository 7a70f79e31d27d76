#!/bin/bash
# Remove scratch files older than one hour from /app/data.
find /app/data -name '*.tmp' -type f -mmin +60 -delete
