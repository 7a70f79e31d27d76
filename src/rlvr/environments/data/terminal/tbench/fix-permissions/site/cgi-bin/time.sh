#!/bin/bash
echo "Content-Type: text/plain"
echo
date
