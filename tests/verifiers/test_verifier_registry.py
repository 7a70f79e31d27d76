"""Verifiers by name: built-ins, 'module:Class' entry points, third-party plugins, the spec, loud failures."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError
from rlvr.core.registry import Registry
from rlvr.verifiers.math import MathVerifier
from rlvr.verifiers.registry import VerifierSpec, close_cached_verifiers, get_verifier, verifier_names
from rlvr.verifiers.testing import ConstantVerifier
from rlvr.verifiers.wrappers import FormatReward


def test_builtin_names() -> None:
    assert {"math", "reasoning_gym", "constant"} <= set(verifier_names())
    v = get_verifier("math", timeout_s=3)
    assert v.name == "math" and v.config.timeout_s == 3


def test_entry_point_name() -> None:
    v = get_verifier("rlvr.verifiers.testing:ConstantVerifier", status="incorrect", reward=0.0)
    assert isinstance(v, ConstantVerifier) and v.status == "incorrect"


def test_unknown_name_and_options() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'math'"):
        get_verifier("maths")
    with pytest.raises(ConfigError, match=r"unknown option.*timout_s"):
        get_verifier("math", timout_s=3)
    with pytest.raises(ConfigError, match="rejected its configuration"):
        get_verifier("math", timeout_s=-1)
    with pytest.raises(ConfigError, match="not a Verifier"):
        get_verifier("rlvr.core.types:Message", role="user")


# -- the one spec a verifier is built from ------------------------------------------------------------
def test_a_spec_builds_records_caches_and_round_trips_through_json() -> None:
    spec = VerifierSpec(name="math", config={"timeout_s": 3})
    built = spec.build()
    assert VerifierSpec.of(built) == spec and built.config.timeout_s == 3
    cached = spec.cached()
    assert cached is VerifierSpec.parse(spec.key()).cached() is VerifierSpec.parse(json.loads(spec.key())).cached()
    assert spec.cached() is not built  # build() is always new, cached() once per process
    assert VerifierSpec.of(MathVerifier(timeout_s=3)) is None  # built directly: no spec to record
    built.close()
    close_cached_verifiers()


def test_a_wrapper_spec_builds_the_wrapper_and_a_direct_wrapper_records_its_spec() -> None:
    spec = VerifierSpec(name="math").with_wrapper("rlvr.verifiers.wrappers:FormatReward", weight=0.3)
    wrapped = spec.build()
    assert isinstance(wrapped, FormatReward) and wrapped.weight == 0.3 and VerifierSpec.of(wrapped) == spec
    assert wrapped.verify("\\boxed{2}", "2").reward == 1.3
    direct = FormatReward(VerifierSpec(name="math").build(), weight=0.3)
    assert VerifierSpec.of(direct) == VerifierSpec(name="math").with_wrapper(
        "rlvr.verifiers.wrappers:FormatReward", weight=0.3, pattern=None, max_answer_chars=200)
    assert VerifierSpec.of(FormatReward(direct)) is None  # a wrapper around a wrapper: not one spec
    with pytest.raises(ConfigError, match="rejected its arguments"):
        VerifierSpec(name="math").with_wrapper("rlvr.verifiers.wrappers:FormatReward", weigth=0.3).build()
    for v in (wrapped, direct):
        v.close()


def test_a_spec_of_another_format_is_refused_with_re_run_export() -> None:
    old = {"class": "rlvr.verifiers.math.verifier:MathVerifier", "config": {"timeout_s": 10.0}}  # before specs
    with pytest.raises(ConfigError, match="re-run `rlvr export`"):
        VerifierSpec.parse(old)
    with pytest.raises(ConfigError, match="re-run `rlvr export`"):
        VerifierSpec.parse(json.dumps(old))


# -- third-party verifiers ------------------------------------------------------------------------------
PLUGIN = '''
import functools
from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig


def _score(word, response, reference):
    ok = word in response
    return Verdict(status="correct" if ok else "incorrect", reward=float(ok))


class WordVerifier(PooledVerifier):
    name = "word"

    def __init__(self, word="yes", **config):
        super().__init__(VerifierConfig(**{"scoring": "inline", **config}))
        self.word = word

    def scorer(self):
        return functools.partial(_score, self.word)


def register(reg):
    reg.register("hooked_word", "fake_rlvr_verifier_plugin:WordVerifier")
'''


def test_third_party_verifiers_come_from_the_entry_point_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlvr.core import registry as core_registry
    from rlvr.verifiers import registry as verifier_registry

    (tmp_path / "fake_rlvr_verifier_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    group = verifier_registry.ENTRY_POINT_GROUP
    fake = [EntryPoint(name="word", value="fake_rlvr_verifier_plugin:WordVerifier", group=group),
            EntryPoint(name="fake.hooks", value="fake_rlvr_verifier_plugin:register", group=group)]
    monkeypatch.setattr(core_registry, "entry_points", lambda group: [ep for ep in fake if ep.group == group])
    fresh = Registry(group, verifier_registry.VERIFIERS)
    fresh.register("math", "rlvr.verifiers.math:MathVerifier")
    monkeypatch.setattr(verifier_registry, "registry", fresh)
    assert {"word", "hooked_word", "math"} <= set(verifier_names())
    word = get_verifier("word", word="cat")
    assert word.verify("a cat", "").status == "correct" and get_verifier("hooked_word").verify("no", "").reward == 0.0
    assert VerifierSpec.of(word) == VerifierSpec(name="word", config={"word": "cat"})
    with pytest.raises(ConfigError, match="Did you mean 'word'"):
        get_verifier("wrd")
