#!/bin/bash
# rebuild the site
echo building
