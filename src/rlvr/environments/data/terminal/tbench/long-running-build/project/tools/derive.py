"""Derive a module's object digest: key-stretched SHA-256 of the build mode and the source."""

import hashlib
import sys

ROUNDS = 200_000


def derive(mode, source):
    digest = hashlib.sha256(mode.encode() + b"\0" + source).digest()
    for _ in range(ROUNDS):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


if __name__ == "__main__":
    with open(sys.argv[2], "rb") as fh:
        print(derive(sys.argv[1], fh.read()))
