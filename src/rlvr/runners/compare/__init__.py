"""`rlvr compare`: one environment, several trainer backends, one report.

For each backend (`trl`, `verl`, `openrlhf`), in that backend's own interpreter (`--<backend>-python`,
else `$RLVR_<BACKEND>_PYTHON`, else this Python; their transformers pins conflict, so each usually
has its own virtual environment):

1. **probe** it: do rlvr and the backend import, how many CUDA devices does it see. A backend that
   cannot run there is reported as `unavailable: <why>` and skipped, not an error.
2. **parity**: replay parity records built for *this* environment (`rlvr.runners.parity.records.build_records`:
   rlvr's own verdicts and episode-layout token fields) through the backend's replay function
   (`python -m rlvr.runners.parity replay` in that interpreter) and compare rewards and loss masks.
3. **train**: TRL trains on CPU or GPU (`rlvr train --backend trl` in its interpreter); veRL and
   OpenRLHF train on the GPU where the interpreter sees one (`rlvr train --backend verl|openrlhf`,
   unchanged), else in rlvr's CPU mode (`--device cpu`, `rlvr.adapters.cpu`) with the options of
   `CPU_COMPARE_ARGS` that align them with TRL (`CPU_ALIGNMENT` says what differs and how it was
   aligned). Every run writes `reward_curve.csv` (`rlvr.runners.train.curve`), read here for the report.

Then `report.html` (self-contained, plots embedded) and `summary.json`.

```
command.py   compare_command: the whole comparison, interrupt-safe
steps.py     one backend's steps: probe, parity replay, training or dry run
summary.py   summary.json (CompareSummary, BackendResult) and the output folder
report.py    report.html
```

Output folder:

```
parity/records.json      the records replayed (with rlvr's expected results)
parity/<backend>.json    each backend's replay results
<backend>/               its training run (TRL: reward_curve.csv, model/; veRL/OpenRLHF: export/, command.sh, train.log)
<backend>.log            the training subprocess's output
summary.json             everything in the report, machine-readable (schema: `BackendResult`)
report.html              the report
```
"""

__all__: list[str] = []
