"""The worker pool: hard timeouts by a parent watchdog, crash recovery, thread safety."""

import asyncio
import functools
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rlvr.core.errors import VerifierError
from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig
from rlvr.verifiers.pool import WorkerPool


def _behave(response: str, reference: str) -> Verdict:
    if response == "sleep":
        time.sleep(60)
    if response == "crash":
        os._exit(3)
    if response == "kill":  # the worker killed from outside, mid-chunk
        os.kill(os.getpid(), signal.SIGKILL)
    if response == "raise":
        raise RuntimeError("grader bug")
    if response == "memory":
        _ = bytearray(1 << 34)
    if response == "print":
        print("noise on stdout must not corrupt the protocol")
    if response == "pid":  # held a while, so that one worker cannot take every item of a batch on a loaded machine
        time.sleep(0.25)
        return Verdict(status="correct", reward=1.0, extracted=str(os.getpid()))
    ok = response == reference
    return Verdict(status="correct" if ok else "incorrect", reward=float(ok), extracted=response)


class _Toy(PooledVerifier):
    name = "toy"

    def scorer(self):
        return functools.partial(_behave)


@pytest.fixture(scope="module")
def toy():
    v = _Toy(VerifierConfig(timeout_s=2.0, memory_limit_mb=1024))
    yield v
    v.close()


def test_ok_and_incorrect(toy):
    assert toy.verify("a", "a").status == "correct"
    assert toy.verify("a", "b").status == "incorrect"


def test_timeout_kills_worker_and_pool_recovers(toy):
    start = time.monotonic()
    v = toy.verify("sleep", "x")
    assert v.status == "timeout" and v.reward == 0.0
    assert time.monotonic() - start < 10
    assert toy.verify("a", "a").status == "correct"


@pytest.mark.parametrize("response", ["crash", "raise", "memory"])
def test_grader_failure_is_error_not_zero(toy, response):
    v = toy.verify(response, "x")
    assert v.status == "error" and v.reward is None
    assert toy.verify("a", "a").status == "correct"


def test_stdout_noise_is_harmless(toy):
    assert toy.verify("print", "print").status == "correct"


def test_thread_safety(toy):
    results: list[Verdict] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        v = toy.verify(str(i), str(i))
        with lock:
            results.append(v)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 16 and all(r.status == "correct" for r in results)


def test_async(toy):
    async def main():
        return await asyncio.gather(*(toy.averify(str(i), str(i)) for i in range(6)))

    assert all(v.status == "correct" for v in asyncio.run(main()))


def test_batch_order_and_parallel_workers():
    with _Toy(VerifierConfig(timeout_s=5.0)) as v:
        pairs = [(str(i), str(i if i % 3 else -1)) for i in range(40)]
        out = v.verify_batch(pairs, workers=2)
        assert [o.extracted for o in out] == [str(i) for i in range(40)]
        assert [o.status for o in out] == ["incorrect" if i % 3 == 0 else "correct" for i in range(40)]
        pids = {o.extracted for o in v.verify_batch([("pid", "")] * 20, workers=2)}
        assert len(pids) == 2


def test_inline_scoring_turns_exceptions_into_errors():
    v = _Toy(VerifierConfig(scoring="inline"))
    assert v.verify("raise", "x").status == "error"
    assert v.verify("a", "a").status == "correct"


def test_pool_closed_rejects():
    pool = WorkerPool(functools.partial(_behave), workers=1, timeout_s=1)
    assert pool.call("a", "a").kind == "ok"
    pool.close()
    with pytest.raises(Exception, match="closed"):
        pool.call("a", "a")


def test_resize_and_close_under_concurrent_use_never_hang_or_raise():
    """verify_batch(workers=N) grows the pool in place; close() during use gives verdicts, not hangs."""
    v = _Toy(VerifierConfig(timeout_s=5.0))
    v.verify("a", "a")  # a 1-worker pool exists
    seen: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                seen.append(v.verify("x", "x").status)
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=loop) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    assert [o.status for o in v.verify_batch([("b", "b")] * 10, workers=2)] == ["correct"] * 10
    v.close()
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join(timeout=15)
        assert not t.is_alive(), "a verify() call hung"
    v.close()
    assert not errors
    assert seen and set(seen) <= {"correct", "error"}


def _statuses(verdicts: list[Verdict]) -> list[tuple[str, str | None]]:
    return [(v.status, v.extracted) for v in verdicts]


@pytest.mark.parametrize(("bad", "status"), [("sleep", "timeout"), ("crash", "error"), ("kill", "error"),
                                              ("raise", "error")])
def test_a_failing_item_in_a_chunk_leaves_its_chunk_mates_their_own_verdicts(bad, status):
    """One chunk of 6 items, the 3rd hangs or kills its worker: it alone fails, the rest are scored by a new one."""
    with _Toy(VerifierConfig(timeout_s=1.0)) as v:
        pool = v._get_pool(1)
        pairs = [("a", "a"), ("b", "x"), (bad, "x"), ("c", "c"), ("d", "x"), ("e", "e")]
        outcomes = list(pool.map(pairs, chunk_size=len(pairs)))
        verdicts = [v._from_outcome(o) for o in outcomes]
        assert _statuses(verdicts[:2]) == [("correct", "a"), ("incorrect", "b")]
        assert verdicts[2].status == status and verdicts[2].extracted is None
        assert verdicts[2].reward == (0.0 if status == "timeout" else None)
        assert _statuses(verdicts[3:]) == [("correct", "c"), ("incorrect", "d"), ("correct", "e")]
        assert all(o.elapsed_s < 1.5 for i, o in enumerate(outcomes) if i != 2)  # timed from its own start


def test_each_item_of_a_chunk_has_its_own_deadline():
    """Items that each take most of the limit all pass, though the chunk as a whole runs far past it."""
    with _Toy(VerifierConfig(timeout_s=1.0)) as v:
        pool = v._get_pool(1)
        outcomes = list(pool.map([("pid", "")] * 6, chunk_size=6))  # 0.25 s each: 1.5 s in all
        assert [o.kind for o in outcomes] == ["ok"] * 6
        assert len({o.value.extracted for o in outcomes}) == 1  # one worker, never killed


def test_several_hanging_items_in_a_batch():
    with _Toy(VerifierConfig(timeout_s=1.0)) as v:
        pairs = [(r, r) for r in ("a", "sleep", "b", "sleep", "crash", "c")]
        got = [x.status for x in v.verify_batch(pairs)]
        assert got == ["correct", "timeout", "correct", "timeout", "error", "correct"]
        assert v.verify("z", "z").status == "correct"


def test_map_chunks_an_iterator_and_keeps_input_order():
    with _Toy(VerifierConfig(timeout_s=5.0)) as v:
        pool = v._get_pool(2)
        outcomes = list(pool.map(((str(i), str(i % 2)) for i in range(30)), concurrency=2))
        assert [o.value.extracted for o in outcomes] == [str(i) for i in range(30)]


_SCORER = """
import functools
from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier


def score(response, reference):
    return Verdict(status="correct", reward=1.0, extracted=response)


class Mine(PooledVerifier):
    name = "mine"

    def scorer(self):
        return {scorer}


def main():
    verifier = Mine()
    try:
        print(verifier.verify("x", "x").status)
    finally:
        verifier.close()
"""
# Bounds the recursion should the guard ever break: the module refuses a third import (one per process).
_BOUND = """
import pathlib
_imports = pathlib.Path(__file__).with_suffix(".imports")
with _imports.open("a") as _f:
    _f.write("x")
if len(_imports.read_text()) > 4:
    raise SystemExit("imported too often: verifier workers recursed")
"""


def _python(tmp_path, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.mark.parametrize("scorer", ["score", "functools.partial(score)"])
def test_a_scorer_defined_in_the_script_that_runs_is_refused_with_the_fix(tmp_path, scorer):
    """Workers import the scorer by module name; a script's `__main__` is not importable from another process."""
    (tmp_path / "train.py").write_text(_SCORER.format(scorer=scorer) + "\nmain()\n")
    run = _python(tmp_path, "train.py")
    assert run.returncode != 0
    assert "is defined in the script you ran (`__main__`)" in run.stderr
    assert "move it into a module beside the script" in run.stderr
    # the fix: the same code in a module, imported by the script
    (tmp_path / "my_verifier.py").write_text(_SCORER.format(scorer=scorer))
    (tmp_path / "train.py").write_text("import my_verifier\n\nmy_verifier.main()\n")
    ok = _python(tmp_path, "train.py")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "correct"


def test_a_module_that_scores_when_imported_fails_once_instead_of_starting_workers_forever(tmp_path):
    """Like multiprocessing's spawn, a worker importing the scorer's module runs its top level: no nested pools."""
    (tmp_path / "my_verifier.py").write_text(_BOUND + _SCORER.format(scorer="score") + "\nmain()\n")
    (tmp_path / "train.py").write_text("import my_verifier\n")
    run = _python(tmp_path, "train.py")
    assert run.returncode != 0
    assert "that module scores at import time" in run.stderr, run.stderr
    assert "imported too often" not in run.stderr  # each worker failed at its first nested pool


@pytest.mark.parametrize("fn", [lambda r, ref: None, functools.partial(lambda r, ref: None)])
def test_a_scorer_that_cannot_be_pickled_is_refused_when_the_pool_is_made(fn):
    with pytest.raises(VerifierError, match="define it at the top level of an importable module"):
        WorkerPool(fn)
