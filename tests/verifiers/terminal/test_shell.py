"""Test scripts split into commands (`rlvr.verifiers.terminal.shell`): here-documents, kinds of commands."""

from __future__ import annotations

import pytest

from rlvr.verifiers.terminal.shell import split_commands


@pytest.mark.parametrize("delimiter", ["'PY'", '"PY"', "\\PY", "PY"])
def test_quoted_here_documents_parse(delimiter):
    script = f"cd /app\npython3 - <<{delimiter}\nimport json\nprint(json.dumps(1))\nPY\npytest /tests -rA\n"
    commands = split_commands(script)
    assert [c.kind for c in commands] == ["cd", "other", "pytest"]
    assert commands[1].text == f"python3 - <<{delimiter}"
    assert split_commands("cat <<-  'EOF' > /tmp/x\n\tbody\n\tEOF\necho ok\n")[1].kind == "noop"


def test_shell_classification():
    kinds = [c.kind for c in split_commands("set -e\nexport A=1\npip install x\nuvx -p 3.13 -w pytest pytest /tests\n"
                                            "echo done\nmake")]
    assert kinds == ["noop", "export", "install", "pytest", "noop", "other"]
