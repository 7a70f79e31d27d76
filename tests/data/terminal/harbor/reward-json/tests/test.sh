#!/bin/bash
mkdir -p /logs/verifier
python3 /tests/score.py > /logs/verifier/reward.json
