"""What the model policies share: sampling settings, per-request seeds, the tokenizer loader."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from rlvr.core.errors import ConfigError, MissingExtraError
from rlvr.rollout.policy import Episode
from rlvr.rollout.tokens import ChatTokenizer

__all__: list[str] = []


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters shared by the model policies.

    Attributes:
        max_tokens: most tokens per turn.
        temperature: softmax temperature (0 = greedy).
        top_p: nucleus sampling mass.
        seed: base sampling seed, or None; each request gets `request_seed` (distinct per task,
            sample and turn) where the backend takes a per-request seed (vLLM, OpenAI API), and
            the transformers policy reseeds torch with it before each request, so seeded
            rollouts do not depend on `concurrency` or on the order episodes reach the model.
    """

    max_tokens: int = 512
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p must be in (0, 1], got {self.top_p}")


def request_seed(sampling: Sampling, episode: Episode | None) -> int | None:
    """Seed of one request: `sampling.seed` mixed with (task id, sample, turn), or None when unseeded.

    A fixed seed per request would make the n samples of a task identical; this keeps each
    (task, sample, turn) reproducible and the samples distinct. Range: [0, 2**31).
    """
    if sampling.seed is None:
        return None
    if episode is None:
        return sampling.seed
    key = f"{sampling.seed}:{episode.task.id}:{episode.sample}:{episode.turn}".encode()
    return zlib.crc32(key) & 0x7FFFFFFF



def require_package(package: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        raise MissingExtraError(package, extra)


def load_tokenizer(name_or_path: str | Path) -> ChatTokenizer:
    """Load a Hugging Face tokenizer (local folder or cached Hub id) for rendering chat turns.

    Raises:
        MissingExtraError: transformers is not installed.
    """
    require_package("transformers", "trl")
    from transformers import AutoTokenizer

    tokenizer: ChatTokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
    return tokenizer

