"""Repository bug-fix tasks from real Python projects, without Docker: `rlvr forge` and `swe/forge-v1`.

The stages, one module each (the driver with its engine, resume and progress is `rlvr.runners.forge`):

- `project`: a project's source tree (a folder, an sdist, or NAME==VERSION from the package index),
  its import root, modules, tests and workspace; bad input refused with the reason;
- `suite` (+ `guest_suite`, run inside the sandbox): the test suite in a fresh bubblewrap sandbox,
  outcomes and per-test coverage;
- `mutators`: 13 seeded AST bug families (after SWE-smith's procedural modifiers);
- `validate`: the kept tests of a project, and FAIL_TO_PASS / PASS_TO_PASS of a candidate;
- `harbor`: a validated bug as a Harbor task directory and its `tasks.jsonl` row;
- `candidate`: one candidate start to end, as a verifier the engines run;
- `env`: the `swe/forge-v1` environment over the tasks.

Imports nothing on its own: each stage is imported where it is used.
"""
