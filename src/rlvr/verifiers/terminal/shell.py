"""Reading the shell in task files (Dockerfile RUN lines, run-tests.sh, test.sh) with `bashlex`.

`bashlex` (a port of bash's own parser) splits a script into its top-level commands with their
source spans; this module classifies them the way a grader needs:

- `install`: package installation and its boilerplate (`apt-get`, `apt`, `dpkg`, `pip`, `uv`
  `init/add/venv/pip/sync/tool install`, `conda`, the uv installer `curl ... | sh` and
  `source $HOME/.local/bin/env`), which needs a network at grading time and is never run there;
- `pytest`: a pytest invocation (`pytest`, `py.test`, `python -m pytest`, `uv run [opts] pytest`,
  `uvx [opts] pytest`, `uv tool run pytest`) with its arguments;
- `cd`, `export`, `noop` (`set`, `echo` to the terminal, `:`), `guard` (Terminal-Bench's template
  `if [ "$PWD" = "/" ]` check), `reward` (Harbor's `if [ $? -eq 0 ]; then echo 1 > reward.txt`);
- `other`: anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__: list[str] = []

Kind = Literal["install", "pytest", "cd", "export", "noop", "guard", "reward", "other"]


class ShellParseError(ValueError):
    """bashlex could not parse the script."""


@dataclass(frozen=True)
class Command:
    """One top-level command of a script."""

    kind: Kind
    text: str
    start: int
    end: int
    words: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = field(default=())
    writes: tuple[str, ...] = field(default=())
    """Absolute paths the command writes: redirect targets and the paths of file-changing commands."""


_APT = {"apt-get", "apt", "aptitude", "dpkg", "apk", "yum", "dnf", "microdnf"}
_PIP = {"pip", "pip3"}
_UV_INSTALL = {"init", "add", "venv", "pip", "sync", "lock", "python", "tool", "self"}
_PYTHON = re.compile(r"^(?:/\S*/)?python(?:3(?:\.\d+)?)?$")


_QUOTED_HEREDOC = re.compile(r"(<<-?[ \t]*)(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\([^\s;&|<>()]+))")


def _unquote_heredocs(source: str) -> str:
    r"""`<<'EOF'`, `<<"EOF"`, `<<\EOF` as `<<  EOF` (same length, so every span stays where it was).

    bashlex keeps the quotes in the delimiter it looks for and then finds no end of the
    here-document; the quotes only turn off expansion in its body, which the parser never does.
    """
    def plain(m: re.Match[str]) -> str:
        word = m.group(2) or m.group(3) or m.group(4)
        quoted = m.group(0)[len(m.group(1)):]
        return m.group(1) + " " * (len(quoted) - len(word)) + word

    return _QUOTED_HEREDOC.sub(plain, source)


def _parse(source: str) -> list[Any]:
    import bashlex  # lazy: only task loading needs it

    try:
        return list(bashlex.parse(_unquote_heredocs(source)))
    except (bashlex.errors.ParsingError, NotImplementedError, IndexError, TypeError, AttributeError) as exc:
        raise ShellParseError(f"cannot parse the shell script: {exc}") from exc


def _words(node: Any) -> list[str]:
    return [part.word for part in getattr(node, "parts", []) if part.kind == "word"]


def _assignments(node: Any) -> list[str]:
    return [part.word for part in getattr(node, "parts", []) if part.kind == "assignment"]


def _redirects(node: Any) -> list[str]:
    out = []
    for part in getattr(node, "parts", []):
        if part.kind == "redirect" and hasattr(part.output, "word"):
            out.append(part.output.word)
    return out


_WRITERS = {"cp", "mv", "mkdir", "ln", "touch", "tee", "install", "chmod", "chown", "rm", "rmdir", "truncate", "dd",
            "tar", "unzip", "git"}


def _writes(node: Any) -> tuple[str, ...]:
    """Absolute paths `node` writes: `>`/`>>` targets anywhere in it, absolute arguments of file-changing commands."""
    out: list[str] = []

    def visit(n: Any) -> None:
        if getattr(n, "kind", "") == "redirect" and getattr(n, "type", "") in (">", ">>", ">|", "&>") and \
                hasattr(n.output, "word") and n.output.word.startswith("/"):
            out.append(n.output.word)
        if getattr(n, "kind", "") == "command":
            words = _words(n)
            if words and words[0].rsplit("/", 1)[-1] in _WRITERS:
                out.extend(w.split("=", 1)[-1] for w in words[1:] if w.split("=", 1)[-1].startswith("/"))
        for child in getattr(n, "parts", []) or []:
            visit(child)
        for name in ("list", "command"):
            child = getattr(n, name, None)
            if isinstance(child, list):
                for c in child:
                    visit(c)
            elif child is not None and hasattr(child, "kind"):
                visit(child)

    visit(node)
    return tuple(out)


def _strip_python(words: list[str]) -> list[str] | None:
    """The pytest arguments of a pytest invocation, or None when `words` is not one."""
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1]
    if head in ("pytest", "py.test"):
        return words[1:]
    if _PYTHON.match(words[0]) and len(words) >= 3 and words[1] == "-m" and words[2] == "pytest":
        return words[3:]
    if head in ("uv", "uvx"):
        rest = words[1:]
        if head == "uv":
            if rest[:1] == ["run"]:
                rest = rest[1:]
            elif rest[:2] == ["tool", "run"]:
                rest = rest[2:]
            else:
                return None
        while rest and rest[0].startswith("-"):  # uv's own options, some with a value
            takes_value = rest[0] in ("-p", "--python", "-w", "--with", "--from", "--with-requirements", "--project",
                                      "--directory", "--index-url", "--extra-index-url", "--group", "--extra")
            rest = rest[2:] if takes_value and "=" not in rest[0] else rest[1:]
        return _strip_python(rest)
    return None


def _is_install(words: list[str], node: Any) -> bool:
    if not words:
        return False
    head = words[0].rsplit("/", 1)[-1]
    if head in _APT or head in _PIP or head in ("conda", "mamba", "micromamba", "pipx", "npm", "gem"):
        return head not in ("npm", "gem") or words[1:2] in (["install"], ["i"], ["ci"])
    if head == "uv" and words[1:2] and words[1] in _UV_INSTALL:
        return True
    if _PYTHON.match(words[0]) and words[1:3] == ["-m", "pip"]:
        return True
    if head in ("source", ".") and any(w.endswith((".local/bin/env", ".cargo/env", "/bin/activate"))
                                       for w in words[1:]):
        return True  # the uv installer's PATH file, a virtual environment's activation
    return head == "rm" and any("/var/lib/apt/lists" in w or "/var/cache/apt" in w for w in words[1:])


def _is_uv_bootstrap(node: Any, text: str) -> bool:
    """`curl -LsSf https://astral.sh/uv/.../install.sh | sh` and the like: an installer pipeline."""
    commands = [p for p in getattr(node, "parts", []) if p.kind == "command"]
    if len(commands) < 2:
        return False
    first, last = _words(commands[0]), _words(commands[-1])
    return bool(first) and first[0] in ("curl", "wget") and bool(last) and last[0] in ("sh", "bash")


def _classify(node: Any, text: str) -> Command:
    command = _classify_kind(node, text)
    writes = _writes(node)
    if not writes:
        return command
    from dataclasses import replace

    return replace(command, writes=writes)


def _classify_kind(node: Any, text: str) -> Command:
    start, end = node.pos
    if node.kind == "pipeline":
        kind: Kind = "install" if _is_uv_bootstrap(node, text) else "other"
        first = next((p for p in node.parts if p.kind == "command"), None)
        return Command(kind, text, start, end, tuple(_words(first)) if first is not None else ())
    if node.kind == "compound":
        return Command(_classify_compound(text, node), text, start, end)
    if node.kind != "command":
        return Command("other", text, start, end)
    words = _words(node)
    if not words:
        return Command("export" if _assignments(node) else "noop", text, start, end, tuple(_assignments(node)))
    head = words[0]
    args = _strip_python(words)
    if args is not None:
        return Command("pytest", text, start, end, tuple(words), tuple(args))
    if _is_install(words, node):
        return Command("install", text, start, end, tuple(words))
    if head == "cd" and len(words) <= 2:
        return Command("cd", text, start, end, tuple(words))
    if head == "export" and all("=" in w for w in words[1:]):
        return Command("export", text, start, end, tuple(words[1:]))
    if head in ("set", ":", "true") or (head in ("echo", "printf") and not _redirects(node)):
        return Command("noop", text, start, end, tuple(words))
    return Command("other", text, start, end, tuple(words))


_GUARD = re.compile(r'^if\s+\[\s+"?\$PWD"?\s+=\s+"?/"?\s+\];?\s+then\b.*\bexit\b.*\bfi$', re.DOTALL)
_REWARD = re.compile(r"^if\s+\[\s+\$\?\s+-eq\s+0\s+\];?\s+then\s+echo\s+1\s*>\s*\S*reward\.txt\s+else\s+echo\s+0"
                     r"\s*>\s*\S*reward\.txt\s+fi$", re.DOTALL)


def _inner_commands(node: Any) -> list[Any]:
    """Every command and pipeline node inside a compound (if/while/for/{ }/( ) bodies and conditions)."""
    found = []
    for child in list(getattr(node, "parts", None) or []) + list(getattr(node, "list", None) or []):
        if getattr(child, "kind", "") in ("command", "pipeline"):
            found.append(child)
        else:
            found += _inner_commands(child)
    return found


def _inner_kind(node: Any) -> str:
    if node.kind == "pipeline":
        commands = [p for p in node.parts if p.kind == "command"]
        if len(commands) == 1:  # `! command -v uv`: a negated single command
            return _inner_kind(commands[0])
        return "install" if _is_uv_bootstrap(node, "") else "other"
    words = _words(node)
    if _is_install(words, node):
        return "install"
    quiet = all(target in ("/dev/null", "&1", "&2") for target in _redirects(node))
    return "probe" if words and words[0] in _PROBES and quiet else "other"


_PROBES = {"command", "which", "type", "hash", "[", "test", "echo", "printf", "true", ":", "exit"}


def _classify_compound(text: str, node: Any = None) -> Kind:
    flat = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    if _GUARD.match(flat) and ">" not in flat:
        return "guard"
    if _REWARD.match(flat):
        return "reward"
    if node is not None:  # `if ! command -v uv; then curl ... | sh; fi`: a guarded install is an install
        kinds = [_inner_kind(c) for c in _inner_commands(node)]
        if kinds and "other" not in kinds and "install" in kinds:
            return "install"
    return "other"


def split_commands(source: str) -> list[Command]:
    """The top-level commands of `source`, classified, in order (comments and blank lines dropped).

    Raises:
        ShellParseError: bashlex cannot parse it (some constructs it lacks).
    """
    out = []
    for node in _parse(source):
        if node.kind == "list":  # `a && b`, `a; b`: each part on its own
            for part in node.parts:
                if part.kind != "operator":
                    out.append(_classify(part, source[part.pos[0]:part.pos[1]]))
        else:
            out.append(_classify(node, source[node.pos[0]:node.pos[1]]))
    return out


def install_packages(words: tuple[str, ...]) -> tuple[str, list[str]]:
    """(manager, package names) of an install command: ('apt', [...]), ('pip', [...]) or ('', [])."""
    if not words:
        return "", []
    head = words[0].rsplit("/", 1)[-1]
    rest = list(words[1:])
    if _PYTHON.match(words[0]) and rest[:2] == ["-m", "pip"]:
        head, rest = "pip", rest[2:]
    if head == "uv" and rest[:1] == ["pip"]:
        head, rest = "pip", rest[1:]
    elif head == "uv" and rest[:1] == ["add"]:
        return "pip", [w for w in rest[1:] if not w.startswith("-")]
    if head in ("apt-get", "apt") and "install" in rest:
        names = [w for w in rest[rest.index("install") + 1:] if not w.startswith("-")]
        return "apt", [n.split("=", 1)[0] for n in names]
    if head in _PIP and "install" in rest:
        args = rest[rest.index("install") + 1:]
        if any(a in ("-r", "--requirement", "-e", "--editable", ".") or a.startswith(("-r", "-e")) for a in args):
            return "pip", ["<requirements file or local project>"]
        names = []
        skip = False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint"):
                skip = True
                continue
            if not a.startswith("-"):
                names.append(re.split(r"[<>=!~\[; ]", a, maxsplit=1)[0])
        return "pip", names
    return "", []
