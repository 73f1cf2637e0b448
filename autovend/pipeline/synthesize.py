"""Stage `synthesize`: write the embedded synthetic operator's source folder and its truth."""

from __future__ import annotations

import time
from pathlib import Path

from autovend.data.synth.config import load_synth_config
from autovend.data.synth.generate import synthesize, write_source
from autovend.demand.settings import load_demand_settings
from autovend.io import OutputKind, check_distinct_outputs, check_output_dir
from autovend.progress import step, stepped


@stepped("synth", {"generate": 5.1, "write": 0.4})  # shares of the time (autovend.progress)
def run(
    out_dir: Path,
    truth_dir: Path,
    params: Path | None,
    settings: Path | None,
    *,
    force: bool = False,
    partition_by: tuple[str, ...] | None = None,
) -> dict[str, float]:
    """Check both output folders (refused unless empty, new or earlier outputs, or `force`), generate, write.

    `partition_by`: write orders and inventory as hive-partitioned Parquet by these keys.

    Returns headline figures for the console.
    """
    t0 = time.perf_counter()
    check_distinct_outputs(out_dir, truth_dir)
    check_output_dir(out_dir, OutputKind.SOURCE, force=force, inputs=(params, settings))
    check_output_dir(truth_dir, OutputKind.TRUTH, force=force, inputs=(params, settings))
    config = load_synth_config(params)
    step("generate")
    src = synthesize(config, load_demand_settings(settings))
    step("write")
    write_source(src, out_dir, truth_dir, force=force, partition_by=partition_by)
    tj = src.truth_json
    return {
        "machines": float(len(src.machines)),
        "products": float(len(src.products)),
        "order_lines": float(len(src.orders)),
        "units": tj["units_total"],
        "kept_unit_share": tj["kept_unit_share"],
        "inventory_rows": float(len(src.inventory)),
        "seconds": time.perf_counter() - t0,
    }
