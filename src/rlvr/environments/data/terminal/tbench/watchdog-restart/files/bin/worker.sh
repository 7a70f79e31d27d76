#!/bin/bash
# Pretend worker: writes a heartbeat every few seconds.
while true; do date +%s > /app/run/worker.heartbeat; sleep 5; done
