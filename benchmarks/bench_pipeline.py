"""Benchmarks of the pipeline's halves (run on demand: `python benchmarks/bench_pipeline.py`).

Times, on this machine, the generation of the synthetic operator (target < 60 s), its full calibration
(target < 60 s and < 2 GiB peak memory) and the 100-seed replay of 67 machines x 56 days (target
< 30 s). Each step runs in a child process so its peak resident memory (ru_maxrss) is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STEPS = {
    "synthesize": """
        from autovend.data.synth.config import load_synth_config
        from autovend.data.synth.generate import synthesize, write_source
        src = synthesize(load_synth_config(ROOT / "params/synthetic-cn.yaml"))
        write_source(src, TMP / "src", TMP / "truth")
        extra = {"order_lines": len(src.orders), "units": src.truth_json["units_total"]}
    """,
    "calibrate": """
        from autovend.calibration.calibrate import calibrate
        from autovend.calibration.config import load_calibration_config
        from autovend.data.load import load_source
        src = load_source(TMP / "src")
        t_load = time.perf_counter() - t0
        res = calibrate(src, load_calibration_config(ROOT / "params/synthetic-cn.yaml"))
        extra = {"load_and_check_s": t_load, "u": res.estimates.u}
    """,
    "validate": """
        from autovend.calibration.config import load_calibration_config
        from autovend.data.load import load_source
        from autovend.validation.config import load_validation_config
        from autovend.validation.validate import validate
        p = ROOT / "params/synthetic-cn.yaml"
        res = validate(load_source(TMP / "src"), load_calibration_config(p), load_validation_config(p))
        m = res.metrics
        extra = {"replay_100_seeds_s": res.replay_seconds, "machines": m["n_machines"], "wape": m["wape"]}
    """,
}

CHILD = """
import json, resource, sys, time
from pathlib import Path
ROOT = Path({root!r}); TMP = Path({tmp!r})
t0 = time.perf_counter()
{body}
out = {{"seconds": time.perf_counter() - t0, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}
out.update(extra)
print(json.dumps(out))
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in STEPS.items():
            code = CHILD.format(root=str(ROOT), tmp=tmp, body=textwrap.dedent(body))
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            stats = json.loads(res.stdout.strip().splitlines()[-1])
            shown = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in stats.items())
            print(f"{name:10s} {shown}")


if __name__ == "__main__":
    main()
