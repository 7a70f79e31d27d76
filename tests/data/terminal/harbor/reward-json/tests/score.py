"""Partial credit: the share of the three directories done right, as Harbor's reward.json."""

import json
from pathlib import Path

done = sum((Path("/app/out") / name / "id.txt").is_file()
           and (Path("/app/out") / name / "id.txt").read_text().strip() == name for name in "abc")
print(json.dumps({"reward": done / 3}))
