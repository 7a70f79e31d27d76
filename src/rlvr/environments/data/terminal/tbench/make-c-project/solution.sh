#!/bin/bash
set -euo pipefail
cd /app
cat -A Makefile
make 2>&1 | tail -3 || true
# The recipe line is indented with spaces, objects land in /app, sqrt needs -lm,
# and nothing tracks the header. Write a proper Makefile.
cat > Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -Wextra -O2
LDLIBS = -lm
BUILD = build

SRCS = $(wildcard src/*.c)
OBJS = $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS))

.PHONY: all clean

all: $(BUILD)/stats

$(BUILD)/stats: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c src/stats.h | $(BUILD)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)
MK
make 2>&1 | grep warning || true
# Warnings: an unused local and unused main() parameters.
sed -i -e '/^    int status;$/d' -e 's/^int main(int argc, char \*\*argv)$/int main(void)/' src/main.c
make clean
make
echo "4 8 15 16 23 42" | build/stats
make -q && echo "up to date"
