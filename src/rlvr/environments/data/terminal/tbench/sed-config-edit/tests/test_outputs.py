"""Grader for sed-config-edit: byte-exact comparison with the expected file."""

import configparser
import os
from pathlib import Path

TESTS = Path(os.environ.get("TEST_DIR", "/tests"))
CONF = Path("/app/etc/service.conf")


def test_backup_is_the_original():
    backup = Path("/app/etc/service.conf.orig")
    assert backup.is_file(), "missing /app/etc/service.conf.orig"
    assert backup.read_bytes() == (TESTS / "service.conf.orig").read_bytes()


def test_settings():
    parser = configparser.ConfigParser()
    parser.read_string(CONF.read_text())
    assert parser["general"]["environment"] == "production"
    assert parser["server"]["port"] == "8443"
    assert parser["server"]["tls_enabled"] == "true"
    assert parser["server"]["workers"] == "8"
    assert parser["server"]["max_connections"] == "500"
    assert parser["metrics"]["enabled"] == "true"
    assert parser["metrics"]["port"] == "9100"
    assert parser["general"]["port"] == "8080"
    for section in parser.sections():
        assert "debug" not in parser[section], f"debug still set in [{section}]"


def test_file_exactly_as_expected():
    assert CONF.read_text() == (TESTS / "service.conf.expected").read_text()
