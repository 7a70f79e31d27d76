r"""`rlvr sft`: warm-start a model on verified demonstrations (`rlvr synth`'s `sft.jsonl`) with TRL's `SFTTrainer`.

The loss is on the tokens the model samples in an episode and nowhere else: each assistant turn
from the text after the template's generation prompt through its end-of-turn token (`<|im_end|>`
for ChatML, the tokenizer's EOS in general). The prompt, the tool answers and the template text
around them (the newline after `<|im_end|>` included: the model never samples it) are -100. This is
the rollout layer's rule (`rlvr.rollout.tokens`: loss mask 1 exactly on sampled tokens), so SFT
and GRPO train the same positions of the same conversation.

Rendering: one chat template for SFT, evaluation and GRPO. A model whose template cannot render
tool calls (SmolLM2's ChatML) gets TRL's `qwen2_5` template, as `rlvr train --backend trl` gives it
(`rlvr.adapters.trl.agent.tool_calling_tokenizer`); the template is saved with the trained model, so
`rlvr eval --model OUT` and `rlvr train --model OUT` render prompts and tool calls exactly as SFT did.
Tool-call `arguments` are given to the template as JSON objects (`template_message`): Hugging Face
templates `tojson` them, so the JSON string of the OpenAI wire format would be encoded twice.

A row (`sft.jsonl`, one JSON object per line):

```
{"messages": [{"role": "system"|"user"|"assistant"|"tool", "content": ..., "tool_calls": [...], ...}, ...],
 "tools": [OpenAI tool schemas shown in the prompt], ...}       (other keys: task_id, sample, reward, verdict)
```

Bad rows are **skipped**, each reported with its line number and reason, and counted
(`SftResult.bad_rows`, `OUT/sft_data.json`); nothing is truncated. A row is bad when it is not a
JSON object with a valid `messages` list, has no assistant turn, makes a tool call the template
cannot render (arguments that are not a JSON object, a template that drops the call, no `tools`
to show), renders to more than `max_length` tokens, or cannot be split into turns token-exactly
(a template that is not prefix-preserving, a token across a turn boundary). No usable row at all
is a `DataError`.

Output folder (`OUT`): the model (weights, config, tokenizer with the chat template) at the top, so
`--model OUT` takes it; `checkpoints/checkpoint-N/` (Trainer checkpoints; a rerun of the same
configuration resumes from the last one, another configuration is refused unless `overwrite`);
`sft_run.json` (the configuration, then the result); `sft_data.json` (rows used, bad rows).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.files import atomic_open
from rlvr.core.types import Message
from rlvr.runners.config import CommandConfig

__all__ = ["SftConfig", "run_sft"]

RUN_RECORD, DATA_REPORT, CHECKPOINTS = "sft_run.json", "sft_data.json", "checkpoints"


# -- rows -----------------------------------------------------------------------------------------
def template_message(message: Message) -> dict[str, Any]:
    """`message` as a chat template reads it: the wire format, with each call's `arguments` a JSON object.

    An `arguments` string that is not a JSON object is left as it is (a template then renders a
    string, which `tokenize_conversation` refuses).
    """
    out = message.to_openai()
    for call in out.get("tool_calls") or ():
        try:
            decoded = json.loads(call["function"]["arguments"])
        except ValueError:
            continue
        if isinstance(decoded, dict):
            call["function"]["arguments"] = decoded
    return out


@dataclass(frozen=True)
class BadRow:
    """A row of the data file that is not trained on.

    Attributes:
        line: 1-based line number in the data file.
        reason: what is wrong and how to fix it.
    """

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class SftExample:
    """One tokenized conversation.

    Attributes:
        line: 1-based line number in the data file.
        input_ids: the rendered conversation's token ids, length L <= max_length.
        labels: `input_ids` on trained (sampled) tokens, -100 elsewhere; length L.
    """

    line: int
    input_ids: list[int]
    labels: list[int]


class _Bad(Exception):
    """Why one row cannot be trained on (becomes a `BadRow`)."""


def _render(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            generation_prompt: bool) -> str:
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt,
                                             **kwargs)
    except Exception as exc:  # jinja raises TemplateError (or anything a template's raise_exception says)
        raise _Bad(f"the chat template cannot render the conversation: {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise _Bad(f"apply_chat_template(tokenize=False) returned {type(text).__name__}, expected str")
    return text


def _check_calls(tokenizer: Any, messages: list[dict[str, Any]], i: int, tools: list[dict[str, Any]] | None) -> None:
    """Refuse an assistant turn whose tool calls the template would not show to the model."""
    calls = messages[i].get("tool_calls") or []
    if not calls:
        return
    if not tools:
        raise _Bad(f"message {i + 1} calls a tool but the row has no `tools` (the schemas the prompt shows); "
                   "write rows with rlvr synth, which records the environment's tools")
    for k, call in enumerate(calls):
        if not isinstance(call["function"]["arguments"], dict):
            raise _Bad(f"message {i + 1}, tool call {k + 1} ({call['function']['name']!r}): arguments are not a "
                       "JSON object; give an object such as {\"expression\": \"2 + 3\"}")
    plain = {key: value for key, value in messages[i].items() if key != "tool_calls"}
    if _render(tokenizer, [*messages[:i], plain], tools, False) == _render(tokenizer, messages[: i + 1], tools, False):
        raise _Bad(f"message {i + 1}: the chat template drops tool calls; use a template that renders them "
                   "(chat_template=, e.g. TRL's qwen2_5 for ChatML models)")


def _trained_spans(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                   end_of_turn: str) -> tuple[str, list[tuple[int, int]]]:
    """(the whole rendered text, the character spans the model samples: one per assistant turn)."""
    full = _render(tokenizer, messages, tools, False)
    spans = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        _check_calls(tokenizer, messages, i, tools)
        before = _render(tokenizer, messages[:i], tools, True) if i else ""
        upto = _render(tokenizer, messages[: i + 1], tools, False)
        if not (upto.startswith(before) and full.startswith(upto)):
            raise _Bad(f"the chat template is not prefix-preserving at message {i + 1} (rendering later turns "
                       "rewrites it), so its tokens cannot be split into prompt and reply")
        turn = upto[len(before):]
        stop = turn.find(end_of_turn)
        end = len(turn) if stop < 0 or not end_of_turn else stop + len(end_of_turn)
        spans.append((len(before), len(before) + end))
    if not spans:
        raise _Bad("no assistant turn: nothing to train on")
    return full, spans


def tokenize_conversation(
    tokenizer: Any,
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]] | None = None,
    *,
    max_length: int,
) -> tuple[list[int], list[int]]:
    """Token ids and labels of one conversation, rendered with `tokenizer`'s chat template.

    Args:
        tokenizer: a fast Hugging Face tokenizer (offsets are needed) with a chat template.
        messages: the conversation (prompt, assistant turns, tool answers).
        tools: OpenAI tool schemas the prompt shows (None: none).
        max_length: most tokens allowed.

    Returns:
        (input_ids, labels), each of length L <= max_length: labels are the ids on the tokens of
        each assistant turn up to and including its end-of-turn token, -100 elsewhere.

    Raises:
        DataError: the conversation is bad (see the module docstring); the message says why.
    """
    try:
        return _tokenize(tokenizer, [template_message(m) for m in messages], list(tools) if tools else None,
                         max_length)
    except _Bad as exc:
        raise DataError(str(exc)) from None


def _end_of_turn(tokenizer: Any) -> str:
    """The token text that ends a sampled turn: `<|im_end|>` for ChatML, else the EOS token."""
    vocab = tokenizer.get_vocab()
    return "<|im_end|>" if "<|im_end|>" in vocab else str(tokenizer.eos_token or "")


def _tokenize(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              max_length: int) -> tuple[list[int], list[int]]:
    full, spans = _trained_spans(tokenizer, messages, tools, _end_of_turn(tokenizer))
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids: list[int] = list(encoded["input_ids"])
    if len(ids) > max_length:
        raise _Bad(f"{len(ids)} tokens, more than max_length={max_length}; raise max_length (the row is never "
                   "truncated: a cut conversation would train a wrong mask)")
    labels = [-100] * len(ids)
    for k, (start, end) in enumerate(encoded["offset_mapping"]):
        inside = [lo <= start and end <= hi for lo, hi in spans]
        if any(inside):
            labels[k] = ids[k]
        elif any(start < hi and lo < end for lo, hi in spans):
            raise _Bad(f"token {k} ({full[start:end]!r}) lies across the boundary of an assistant turn; the "
                       "template's turns do not fall on token boundaries")
    return ids, labels


def _row_messages(row: Any) -> tuple[list[Message], list[dict[str, Any]] | None]:
    if not isinstance(row, dict) or not isinstance(row.get("messages"), list) or not row["messages"]:
        raise _Bad('not a conversation: each line must be a JSON object with a non-empty "messages" list')
    try:
        messages = [Message.model_validate(m) for m in row["messages"]]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _Bad(f"a message is not a chat message ({where}: {first['msg']})") from None
    tools = row.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        raise _Bad('"tools" must be a list of OpenAI tool schemas (objects)')
    return messages, tools or None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                yield lineno, line


def read_examples(
    path: str | Path,
    tokenizer: Any,
    *,
    max_length: int,
    limit: int | None = None,
) -> tuple[list[SftExample], list[BadRow]]:
    """Tokenize the rows of an `sft.jsonl` file; bad rows are collected, not trained on.

    Args:
        path: the JSONL file.
        tokenizer: the tokenizer with the chat template to render with.
        max_length: most tokens per row.
        limit: stop after this many usable rows (file order); None: all.

    Returns:
        (examples in file order, bad rows in file order, up to the last line read).

    Raises:
        ConfigError: the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--data {str(path)!r} is not a file; give the sft.jsonl that rlvr synth writes")
    examples: list[SftExample] = []
    bad: list[BadRow] = []
    for lineno, line in _lines(path):
        if limit is not None and len(examples) >= limit:
            break
        try:
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise _Bad(f"not JSON ({exc})") from None
            messages, tools = _row_messages(row)
            ids, labels = _tokenize(tokenizer, [template_message(m) for m in messages], tools, max_length)
        except _Bad as exc:
            bad.append(BadRow(lineno, str(exc)))
            continue
        examples.append(SftExample(lineno, ids, labels))
    return examples, bad


# -- the command ----------------------------------------------------------------------------------
class SftConfig(CommandConfig):
    """One `rlvr sft` run (the CLI builds it with `build`; `run_sft` runs it). Frozen; unknown fields are refused."""

    # -- data and model
    data: Path = Field(description="The demonstrations: an sft.jsonl written by rlvr synth.")
    model: str | None = Field(default=None, description="Model folder, Hub id, or None / smollm2 for the embedded "
                              "SmolLM2-135M-Instruct.")
    output: Path = Field(description="Folder of the trained model (with checkpoints/ and the run records).")
    limit: int | None = Field(default=None, ge=1, description="Train on the first LIMIT usable rows (None: all).")
    max_length: int = Field(default=1024, ge=16, description="Most tokens per row; longer rows are skipped.")
    chat_template: str | None = Field(default=None, description="A chat template (text) to render with; None: the "
                                      "model's own when it renders tool calls, else TRL's qwen2_5.")
    # -- optimisation
    epochs: float = Field(default=3.0, gt=0, description="Passes over the rows (ignored when max_steps is set).")
    max_steps: int | None = Field(default=None, ge=1, description="Optimizer steps; wins over epochs.")
    batch_size: int = Field(default=8, ge=1, description="Rows per device batch.")
    gradient_accumulation_steps: int = Field(default=1, ge=1, description="Batches per optimizer step.")
    learning_rate: float = Field(default=5e-5, gt=0, description="Peak learning rate (AdamW).")
    lr_scheduler_type: str = Field(default="cosine", description="transformers scheduler name.")
    warmup_steps: int = Field(default=0, ge=0, description="Linear warm-up steps.")
    seed: int = Field(default=0, description="Seed of the shuffling and of the trainer.")
    # -- checkpoints
    save_steps: int = Field(default=50, ge=1, description="Save a checkpoint every this many steps.")
    overwrite: bool = Field(default=False, description="Start over instead of resuming an existing output.")

    def record(self) -> dict[str, Any]:
        """What the trained model depends on (compared when a run resumes): every field but `overwrite`."""
        return self.model_dump(mode="json", exclude={"overwrite"})


@dataclass
class SftResult:
    """What `run_sft` produced.

    Attributes:
        output: the model folder.
        examples: rows trained on.
        bad_rows: rows skipped, with line numbers and reasons.
        steps: optimizer steps done in total (resumed ones included).
        resumed_from: the checkpoint the run resumed from, or None.
        wall_s: seconds this call trained.
        log_history: the trainer's log records (loss per logged step).
    """

    output: Path
    examples: int
    bad_rows: list[BadRow]
    steps: int
    resumed_from: Path | None
    wall_s: float
    log_history: list[dict[str, Any]] = field(default_factory=list)


def _write_json(path: Path, value: Any) -> None:
    with atomic_open(path) as f:
        f.write(json.dumps(value, indent=2, sort_keys=True) + "\n")


def _last_complete_checkpoint(folder: Path) -> Path | None:
    """The newest `checkpoint-N` whose `trainer_state.json` (the Trainer writes it last) reads, or None.

    Later ones, torn by a kill during their write, are removed.
    """
    if not folder.is_dir():
        return None
    found = sorted((int(p.name.rsplit("-", 1)[1]), p) for p in folder.glob("checkpoint-*")
                   if p.is_dir() and p.name.rsplit("-", 1)[1].isdigit())
    for _step, path in reversed(found):
        try:
            json.loads((path / "trainer_state.json").read_text())
        except (OSError, ValueError):
            shutil.rmtree(path)
            continue
        return path
    return None


def _prepare_output(config: SftConfig) -> Path | None:
    """Create or resume `config.output`; the checkpoint to resume from (None: start)."""
    out = Path(config.output)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--output {str(out)!r} exists and is not a folder; sft writes a model folder")
    record_path = out / RUN_RECORD
    if config.overwrite and out.exists():
        shutil.rmtree(out)
    elif record_path.is_file():
        recorded = json.loads(record_path.read_text()).get("config")
        if recorded != config.record():
            changed = sorted(k for k in config.record() if (recorded or {}).get(k) != config.record()[k])
            raise ConfigError(f"{out} holds an sft run with another configuration (changed: {', '.join(changed)}); "
                              "pass overwrite (--overwrite) to start over, or another --output")
    elif out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"--output {str(out)!r} is a non-empty folder without an sft run; give a new folder or "
                          "pass --overwrite")
    out.mkdir(parents=True, exist_ok=True)
    _write_json(record_path, {"config": config.record()})
    return _last_complete_checkpoint(out / CHECKPOINTS)


def _tokenizer(config: SftConfig, model_path: str) -> Any:
    from transformers import AutoTokenizer

    from rlvr.adapters.trl.agent import tool_calling_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"{model_path}: rlvr sft needs a fast tokenizer (token offsets place the loss mask)")
    if config.chat_template is not None:
        tokenizer.chat_template = config.chat_template
    else:
        tokenizer, replaced = tool_calling_tokenizer(tokenizer)
        if replaced:
            print("rlvr sft: the model's chat template cannot render tool calls; using trl's qwen2_5 template "
                  "(saved with the model, as rlvr train --backend trl would use it)", file=sys.stderr)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _device_args() -> dict[str, Any]:
    """bf16 on a GPU that has it; on a CPU, fp32 and no pinned memory (TRL defaults to bf16)."""
    import torch

    if torch.cuda.is_available():
        return {"bf16": torch.cuda.is_bf16_supported()}
    return {"use_cpu": True, "bf16": False, "dataloader_pin_memory": False}


def _sft_args(config: SftConfig, out: Path, *, tqdm: bool) -> Any:
    from trl import SFTConfig

    return SFTConfig(
        **_device_args(), output_dir=str(out / CHECKPOINTS), num_train_epochs=config.epochs,
        max_steps=config.max_steps or -1, per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps, learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler_type, warmup_steps=config.warmup_steps, seed=config.seed,
        data_seed=config.seed, max_length=config.max_length, save_strategy="steps", save_steps=config.save_steps,
        save_total_limit=2, logging_steps=1, report_to="none", disable_tqdm=not tqdm, activation_checkpointing=False,
    )


def _report_bad_rows(data: Path, bad: list[BadRow], used: int) -> None:
    if not bad:
        return
    print(f"rlvr sft: skipped {len(bad)} bad row{'s' * (len(bad) != 1)} of {data} ({used} used):", file=sys.stderr)
    for row in bad[:20]:
        print(f"  {data}:{row.line}: {row.reason}", file=sys.stderr)
    if len(bad) > 20:
        print(f"  ... and {len(bad) - 20} more (all in {DATA_REPORT})", file=sys.stderr)


def run_sft(config: SftConfig, *, callbacks: Sequence[Any] = ()) -> SftResult:
    """The `rlvr sft` command: tokenize the rows, train with TRL's `SFTTrainer`, save the model to `config.output`.

    Resumes from the last complete checkpoint in `OUT/checkpoints/` when the configuration is the
    same (a finished run resumes at its last step and trains no further). The trainer logs the loss
    every step.

    Args:
        config: the run.
        callbacks: `transformers.TrainerCallback`s added to the trainer (the CLI's progress bar);
            with none, the trainer shows its own tqdm bar.

    Raises:
        ConfigError: bad options, an output holding another run, a model without a fast tokenizer.
        DataError: no usable row in the data file.
        MissingExtraError: trl is not installed (`pip install 'rlvr[trl]'`).
    """
    from rlvr.adapters.trl.data import require_trl
    from rlvr.runners.models import resolve_model

    require_trl()
    from datasets import Dataset
    from trl import SFTTrainer

    model_path = resolve_model(config.model)
    tokenizer = _tokenizer(config, model_path)
    examples, bad = read_examples(config.data, tokenizer, max_length=config.max_length, limit=config.limit)
    _report_bad_rows(config.data, bad, len(examples))
    if not examples:
        raise DataError(f"{config.data}: no usable row ({len(bad)} bad); the first: {bad[0] if bad else 'empty file'}")
    resume = _prepare_output(config)
    out = Path(config.output)
    _write_json(out / DATA_REPORT, {"data": str(config.data), "examples": len(examples),
                                    "lines": [e.line for e in examples],
                                    "bad_rows": [{"line": b.line, "reason": b.reason} for b in bad]})
    dataset = Dataset.from_dict({"input_ids": [e.input_ids for e in examples], "labels": [e.labels for e in examples]})
    trainer = SFTTrainer(model=model_path, args=_sft_args(config, out, tqdm=not callbacks), train_dataset=dataset,
                         processing_class=tokenizer, callbacks=list(callbacks) or None)
    start = time.monotonic()
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    wall = time.monotonic() - start
    trainer.save_model(str(out))
    result = SftResult(output=out, examples=len(examples), bad_rows=bad, steps=trainer.state.global_step,
                       resumed_from=resume, wall_s=wall, log_history=list(trainer.state.log_history))
    _write_json(out / RUN_RECORD, {"config": config.record(), "steps": result.steps, "examples": result.examples,
                                   "bad_rows": len(bad), "wall_s": round(wall, 3),
                                   "resumed_from": str(resume) if resume else None,
                                   "log_history": result.log_history})
    return result
