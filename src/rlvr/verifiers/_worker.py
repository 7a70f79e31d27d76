"""Worker process entry point for `rlvr.verifiers.pool.WorkerPool`.

Run as `python -m rlvr.verifiers._worker`. Protocol on stdin/stdout, each frame an 8-byte
big-endian length followed by a pickle:

- first frame in: `(sys_path, fn_pickle, memory_limit_bytes | None)`: the caller's `sys.path`
  (so the worker imports what the caller can), then the pickled callable. Answered by `("ready", None)`,
  or `("failed", traceback)` when the callable cannot be unpickled here (the worker then exits).
- then each frame in: a chunk, a list of payload tuples, run in order; one frame out per payload, written
  as soon as it is scored: `("ok", result)` or `("exc", text)`. Replies stream back one by one, so the
  parent's watchdog still times every item on its own (a chunk costs one pickle and one hand-off, not one
  per item).

The real stdout is kept for frames; `sys.stdout` is pointed at stderr so stray prints from
the scored code cannot corrupt the protocol. The worker exits when stdin closes (parent gone).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import traceback
from typing import Any, BinaryIO

FRAME_HEADER = struct.Struct(">Q")
LOADING_ENV = "RLVR_VERIFIER_WORKER_LOADING"  # set while a worker imports the scoring function's module


def read_frame(stream: BinaryIO) -> Any:
    """Read one length-prefixed pickle frame; raise EOFError when the stream closes."""
    header = stream.read(FRAME_HEADER.size)
    if len(header) < FRAME_HEADER.size:
        raise EOFError("stream closed")
    (size,) = FRAME_HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("stream closed mid-frame")
    return pickle.loads(data)


def encode_frame(obj: Any) -> bytes:
    """Encode one object as a length-prefixed pickle frame."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME_HEADER.pack(len(data)) + data


def _limit_memory(limit_bytes: int | None) -> None:
    if not limit_bytes:
        return
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    new = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (new, hard))


def main() -> None:
    """Serve payloads until stdin closes."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        sys_path, fn_pickle, memory_limit = read_frame(inp)
    except EOFError:
        return
    sys.path[:] = [p for p in sys_path if p] + [p for p in sys.path if p not in sys_path]
    os.environ[LOADING_ENV] = "1"  # a pool started while the scorer's module imports is refused (no fork bomb)
    try:
        fn = pickle.loads(fn_pickle)
    except BaseException:  # the parent reports why this worker cannot start
        out.write(encode_frame(("failed", traceback.format_exc(limit=-3))))
        return
    finally:
        del os.environ[LOADING_ENV]
    _limit_memory(memory_limit)
    out.write(encode_frame(("ready", None)))
    while True:
        try:
            chunk = read_frame(inp)
        except EOFError:
            return
        for payload in chunk:
            out.write(_reply(fn, payload))


def _reply(fn: Any, payload: tuple[Any, ...]) -> bytes:
    """The frame answering one payload: `("ok", fn(*payload))`, or `("exc", text)` if that failed."""
    try:
        reply = ("ok", fn(*payload))
    except MemoryError:
        reply = ("exc", "MemoryError: the verifier ran out of its memory limit")
    except BaseException:  # report every failure of the scored code to the parent
        reply = ("exc", traceback.format_exc(limit=-8))
    try:
        return encode_frame(reply)
    except Exception:  # the result itself could not be pickled
        return encode_frame(("exc", traceback.format_exc(limit=-3)))


if __name__ == "__main__":
    main()
