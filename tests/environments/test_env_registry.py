"""The environment registry: versioned ids, lazy entry points, messages, entry-point plugins."""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import rlvr
from rlvr.core import registry as registry_module
from rlvr.core.errors import ConfigError
from rlvr.core.registry import Registry
from rlvr.environments.registry import make
from rlvr.environments.registry import registry as default_registry

PLUGIN = textwrap.dedent(
    '''
    from rlvr.core.types import EnvSpec
    from rlvr.environments.single_turn import SingleTurnEnv
    from rlvr.environments.loaders import TaskList
    from rlvr.core.types import Task
    from rlvr.verifiers.testing import ConstantVerifier

    def make_env(size=2):
        tasks = [Task(id=str(i), prompt=[{"role": "user", "content": "hi"}], reference="1") for i in range(size)]
        return SingleTurnEnv(tasks, ConstantVerifier(), EnvSpec(id="fake/plugin-v1"))

    def register(reg):
        reg.register("fake/hooked-v1", "fake_rlvr_plugin:make_env", size=3)
    '''
)


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "fake_rlvr_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_rlvr_plugin", raising=False)
    return "fake_rlvr_plugin"


def test_builtin_ids_are_registered_and_versioned() -> None:
    ids = default_registry.ids()
    for env_id in ("math/gsm8k-v1", "math/math-v1", "math/reasoning-gym-v1"):
        assert env_id in ids
    with pytest.raises(ConfigError, match="family/name-vN"):
        Registry(None).register("gsm8k", "x:y")


def test_registration_is_lazy(plugin_module: str) -> None:
    reg = Registry(None)
    reg.register("fake/lazy-v1", f"{plugin_module}:make_env")
    assert plugin_module not in sys.modules
    env = reg.make("fake/lazy-v1", size=4)
    assert plugin_module in sys.modules
    assert len(env.tasks) == 4


def test_broken_entry_point_fails_at_make_not_register() -> None:
    reg = Registry(None)
    reg.register("fake/broken-v1", "no_such_module_for_rlvr_tests:make")
    with pytest.raises(ConfigError, match="no_such_module_for_rlvr_tests"):
        reg.make("fake/broken-v1")


def test_unknown_id_lists_versions_and_close_matches() -> None:
    with pytest.raises(ConfigError, match="registered versions: math/gsm8k-v1"):
        default_registry.spec("math/gsm8k-v9")
    with pytest.raises(ConfigError, match="Did you mean 'math/gsm8k-v1'"):
        default_registry.spec("math/gsm8kk-v1")
    with pytest.raises(ConfigError, match="unknown environment"):
        rlvr.make("nothing/here-v1")


def test_entry_point_plugins_are_discovered(plugin_module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    group = registry_module.ENTRY_POINT_GROUP
    fake = [
        EntryPoint(name="fake/plugin-v1", value=f"{plugin_module}:make_env", group=group),
        EntryPoint(name="hook", value=f"{plugin_module}:register", group=group),
    ]
    calls: list[str] = []

    def entry_points(group: str) -> list[EntryPoint]:
        calls.append(group)
        return [ep for ep in fake if ep.group == group]

    monkeypatch.setattr(registry_module, "entry_points", entry_points)
    reg = Registry()
    reg.register("fake/local-v1", f"{plugin_module}:make_env")
    assert calls == []  # nothing scanned before it is needed
    assert {"fake/plugin-v1", "fake/hooked-v1", "fake/local-v1"} <= set(reg.ids())
    assert len(reg.make("fake/plugin-v1").tasks) == 2
    assert len(reg.make("fake/hooked-v1").tasks) == 3  # registered defaults applied
    reg.ids()
    assert calls == [group]  # scanned once


def test_missing_factory_argument_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match=r"code/stdio-v1.*'path'.*--env-arg"):
        make("code/stdio-v1")
