"""`rlvr verify --engine ray` on a real two-node Ray cluster started on loopback by this module.

The cluster (`rlvr.runners.engine.loopback`) is `ray start --head` plus a second node process
`ray start --address ...` on this machine (not Ray's local mode), one CPU each, temporary files
under RAY_TMPDIR. Every run is the `rlvr` CLI in a subprocess, so a test can `kill -9` the driver
or an actor process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import doc_blocks
from rlvr.runners.engine.loopback import LoopbackCluster, loopback_cluster

pytestmark = [pytest.mark.extras, pytest.mark.slow]

if importlib.util.find_spec("ray") is None:  # not imported here: the tests talk to Ray through the CLI
    pytest.skip("ray is not installed (pip install 'rlvr[ray]')", allow_module_level=True)

LABELED = Path(__file__).resolve().parents[3] / "shared" / "data" / "math" / "labeled"

SLOW_VERIFIER = textwrap.dedent(
    '''
    import functools
    import os
    import time

    from rlvr.core.types import Verdict
    from rlvr.verifiers.base import PooledVerifier, VerifierConfig


    def _score(delay, response, reference):
        time.sleep(delay)
        ok = response.strip() == str(reference).strip()
        return Verdict(status="correct" if ok else "incorrect", reward=float(ok))


    class SlowVerifier(PooledVerifier):
        name = "slow"

        def __init__(self, delay=0.01, **config):
            super().__init__(VerifierConfig(**config))
            self.delay = delay

        def scorer(self):
            return functools.partial(_score, self.delay)


    def _poison(response, reference):
        if response == "poison":
            os._exit(1)  # takes the whole Ray actor down: inline scoring has no worker process to absorb it
        return Verdict(status="correct", reward=1.0)


    class PoisonVerifier(PooledVerifier):
        name = "poison"

        def __init__(self, **config):
            super().__init__(VerifierConfig(**{"scoring": "inline", **config}))

        def scorer(self):
            return _poison
    '''
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    mods = tmp_path_factory.mktemp("mods")
    (mods / "slow_rlvr_verifier.py").write_text(SLOW_VERIFIER)
    with loopback_cluster(nodes=2, cpus_per_node=1, python_path=[mods]) as running:
        yield running


def _processbench(n: int) -> list[dict[str, Any]]:
    """ProcessBench solutions with a gold answer: response = steps joined by blank lines."""
    if not LABELED.is_dir():
        pytest.skip(f"{LABELED} is absent")
    rows = []
    for subset in ("gsm8k", "math", "olympiadbench"):
        for line in (LABELED / f"processbench_{subset}.jsonl").read_text().splitlines():
            record = json.loads(line)
            if record.get("gold_answer") is not None:
                rows.append({"id": record["id"], "problem": record["problem"], "response": "\n\n".join(record["steps"]),
                             "reference": str(record["gold_answer"]),
                             "expected": "correct" if record["final_answer_correct"] else "incorrect"})
                if len(rows) == n:
                    return rows
    return rows


def _verify(cluster: LoopbackCluster, inp: Path, out: Path, *extra: str, engine: str = "ray") -> list[str]:
    cmd = [sys.executable, "-m", "rlvr.runners.cli", "verify", str(inp), "-o", str(out), *extra]
    return [*cmd, "--engine", "ray", "--ray-address", cluster.address] if engine == "ray" else cmd


def _run(cluster: LoopbackCluster, cmd: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, env=cluster.env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["verdict"].pop("elapsed_s")
    return rows


def _shard_rows(out: Path) -> int:
    folder = out.with_name(out.name + ".shards")
    return sum(p.read_bytes().count(b"\n") for p in folder.glob("rows-*.jsonl")) if folder.is_dir() else 0


def _actor_pids() -> list[int]:
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in ps.splitlines() if "ray::_VerifyActor" in line]


def test_ray_gives_the_local_verdicts(cluster: LoopbackCluster, tmp_path: Path) -> None:
    rows = _processbench(300)
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n{not json\n" + json.dumps({"response": "x"}) + "\n")
    _run(cluster, _verify(cluster, inp, tmp_path / "local.jsonl", "--workers", "2", engine="local"))
    done = _run(cluster, _verify(cluster, inp, tmp_path / "ray.jsonl", "--workers", "2", "--batch-size", "16"))
    local, ray = _rows(tmp_path / "local.jsonl"), _rows(tmp_path / "ray.jsonl")
    assert len(ray) == len(rows) + 2 and ray == local
    assert sum(r["verdict"]["status"] == r.get("expected") for r in ray) > 0.9 * len(rows)
    assert "matches expected" in done.stdout and "bad row line 302" in done.stderr


def test_killed_actor_batch_is_retried_without_duplicates(cluster: LoopbackCluster, tmp_path: Path) -> None:
    n = 400
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"i": i, "response": str(i), "reference": str(i)}) + "\n" for i in range(n)))
    out = tmp_path / "out.jsonl"
    cmd = _verify(cluster, inp, out, "--verifier", "slow_rlvr_verifier:SlowVerifier", "--verifier-arg",
                  "delay=0.04", "--workers", "2", "--batch-size", "8")
    proc = subprocess.Popen(cmd, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while _shard_rows(out) < 40 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = _actor_pids()
    assert pids, "no actor process found"
    os.kill(pids[0], signal.SIGKILL)  # an actor dies mid-run, with batches in flight
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    assert "sent to a worker again after a worker failure" in stderr, "the kill came too late to test retries"
    rows = _rows(out)
    assert [r["_line"] for r in rows] == list(range(1, n + 1)) and [r["i"] for r in rows] == list(range(n))
    assert all(r["verdict"]["status"] == "correct" for r in rows), "a retried row was lost or failed"


def test_killed_driver_resumes_from_shards(cluster: LoopbackCluster, tmp_path: Path) -> None:
    n = 500
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"i": i, "response": str(i), "reference": str(i)}) + "\n" for i in range(n)))
    out = tmp_path / "out.jsonl"
    cmd = _verify(cluster, inp, out, "--verifier", "slow_rlvr_verifier:SlowVerifier", "--verifier-arg",
                  "delay=0.03", "--workers", "2", "--batch-size", "8")
    proc = subprocess.Popen(cmd, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while _shard_rows(out) < 60 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    written = _shard_rows(out)
    assert 60 <= written < n, f"kill came too late to test resuming ({written} rows written)"
    shard = sorted(out.with_name(out.name + ".shards").glob("rows-*.jsonl"))[-1]
    with shard.open("a") as f:  # as if the kill landed mid-write
        f.write('499\t{"i": 498, "_line": 499, "verd')

    done = _run(cluster, cmd)
    rows = _rows(out)
    assert [r["_line"] for r in rows] == list(range(1, n + 1)) and [r["i"] for r in rows] == list(range(n))
    assert all(r["verdict"]["status"] == "correct" for r in rows)
    resumed = int(done.stdout.split("resumed / written now")[1].split("│")[1].split("/")[0])
    assert resumed >= written - 1  # every complete shard row was kept (the torn one is cut)
    assert not out.with_name(out.name + ".shards").exists()


def test_100k_rows_with_bounded_driver_memory(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """100k ProcessBench rows (1,573 solutions replicated with new ids), the constant verifier.

    The constant verifier keeps this test at about a minute on two cores: math verification runs
    at ~150 rows/s per worker here, so 100k rows would take over five minutes. The driver's work
    (streaming, batching, shards, merge) is the same whatever the verifier.
    """
    base = _processbench(10_000)
    n = 100_000
    inp = tmp_path / "in.jsonl"
    with inp.open("w") as f:
        for i in range(n):
            f.write(json.dumps({**base[i % len(base)], "id": f"pb-{i}"}) + "\n")
    size_mb = inp.stat().st_size / 2**20
    small = tmp_path / "small.jsonl"
    with inp.open() as f:
        small.write_text("".join(line for _, line in zip(range(200), f, strict=False)))

    def peak_rss_mb(source: Path, out: Path) -> float:
        """Run the CLI; return its peak resident memory (MiB), read from the kernel's rusage of the process."""
        log = out.with_suffix(".log")
        with log.open("w") as err:
            proc = subprocess.Popen(_verify(cluster, source, out, "--verifier", "constant", "--workers", "2"),
                                    env=cluster.env, stdout=err, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 0, log.read_text()[-3000:]
        return usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux

    baseline = peak_rss_mb(small, tmp_path / "small-out.jsonl")
    peak = peak_rss_mb(inp, tmp_path / "out.jsonl")
    with (tmp_path / "out.jsonl").open() as f:
        ids = [json.loads(line)["_line"] for line in f]
    assert ids == list(range(1, n + 1))  # every row once, in input order
    print(f"100k rows: driver peak RSS {peak:.0f} MiB (200-row run: {baseline:.0f} MiB), input {size_mb:.0f} MiB")
    # Holding every row would add at least the input's size to the driver.
    assert peak < baseline + size_mb / 2, f"driver peak {peak:.0f} MiB, baseline {baseline:.0f}, input {size_mb:.0f}"


def test_readme_ray_blocks(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """The docs' `readme-test: ray` blocks run as written, `RAY_ADDRESS` pointing at the test cluster."""
    ray_blocks = [b.code for b in doc_blocks.blocks("ray", "bash")]
    assert ray_blocks, "docs/scale.md must show `rlvr verify --engine ray`"
    env = {**cluster.env, "RAY_ADDRESS": cluster.address,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for code in ray_blocks:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{code}\n{done.stderr[-3000:]}"
    assert (tmp_path / "verified.parquet").is_file() and not (tmp_path / "verified.parquet.shards").exists()


def test_row_that_keeps_killing_its_worker_ends_as_error(cluster: LoopbackCluster, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    responses = ["poison" if i == 6 else str(i) for i in range(40)]
    inp.write_text("".join(json.dumps({"response": r, "reference": "x"}) + "\n" for r in responses))
    out = tmp_path / "out.jsonl"
    done = _run(cluster, _verify(cluster, inp, out, "--verifier", "slow_rlvr_verifier:PoisonVerifier", "--workers",
                                 "2", "--batch-size", "8"))
    rows = _rows(out)
    assert [r["_line"] for r in rows] == list(range(1, 41))
    poisoned = rows[6]["verdict"]
    assert poisoned["status"] == "error" and poisoned["reward"] is None
    assert "failed 3 times on the Ray cluster" in poisoned["detail"] and "Actor" in poisoned["detail"]
    assert all(r["verdict"]["status"] == "correct" for i, r in enumerate(rows) if i != 6)
    assert "sent to a worker again" in done.stderr


def test_more_workers_than_cluster_cpus_is_refused(cluster: LoopbackCluster, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"response": "1", "reference": "1"}) + "\n")
    cmd = _verify(cluster, inp, tmp_path / "out.jsonl", "--workers", "3")
    done = subprocess.run(cmd, env=cluster.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "the Ray cluster has 2 CPUs" in done.stderr, done.stderr[-2000:]


RAY_VERIFIER_SCRIPT = textwrap.dedent(
    """
    import json
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from rlvr.runners.engine import make_engine
    from rlvr.verifiers.registry import get_verifier

    pairs = [(r["response"], r["reference"]) for r in map(json.loads, open(sys.argv[1]))]

    def dump(verdicts):
        return [v.model_dump(exclude={"elapsed_s"}) for v in verdicts]

    with get_verifier("math") as local:
        expected = dump(local.verify_batch(pairs, workers=2))
    with make_engine("ray", get_verifier("math"), 2, sys.argv[2]) as engine:
        remote = engine.as_verifier()
        with ThreadPoolExecutor(8) as pool:  # as `rlvr eval` calls env.verifier: many episodes at once
            one_by_one = dump(pool.map(lambda pair: remote.verify(*pair), pairs))
        batch = dump(remote.verify_batch(pairs))
    print(json.dumps({"n": len(pairs), "one_by_one": one_by_one == expected, "batch": batch == expected}))
    """
)


def test_ray_verifier_matches_local_for_item_by_item_callers(cluster: LoopbackCluster, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in _processbench(60)))
    done = subprocess.run([sys.executable, "-c", RAY_VERIFIER_SCRIPT, str(inp), cluster.address], env=cluster.env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"n": 60, "one_by_one": True, "batch": True}


def _episodes(path: Path) -> list[tuple[str, int, dict[str, Any]]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    out = []
    for row in rows:
        row["verdict"].pop("elapsed_s")
        out.append((row["task_id"], row["info"]["sample"], row["verdict"]))
    return sorted(out, key=lambda r: (r[0], r[1]))


def test_eval_with_ray_engine_gives_the_local_verdicts(cluster: LoopbackCluster, tmp_path: Path) -> None:
    base = [sys.executable, "-m", "rlvr.runners.cli", "eval", "--env", "math/reasoning-gym-tool-v1", "-a", "size=6",
            "-n", "2", "-k", "2"]
    for policy in ("oracle", "noop"):
        local, ray = tmp_path / f"{policy}-local.jsonl", tmp_path / f"{policy}-ray.jsonl"
        _run(cluster, [*base, "--policy", policy, "-o", str(local), "--workers", "2"])
        done = _run(cluster, [*base, "--policy", policy, "-o", str(ray), "--engine", "ray",
                              "--ray-address", cluster.address, "--workers", "2"])
        assert _episodes(ray) == _episodes(local) and len(_episodes(ray)) == 12
        statuses = {v["status"] for _, _, v in _episodes(ray)}
        assert statuses == ({"correct"} if policy == "oracle" else statuses - {"correct"})
        assert "pass@1" in done.stdout
