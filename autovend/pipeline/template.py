"""The one template of a source's DVC pipeline: every shipped dvc.yaml is rendered from it, and so is a new one.

    render_pipeline(PipelineSpec(source="kyiv-coffee", world="coffee1", header=...))   # the dvc.yaml text

A pipeline takes a source folder (data/raw/SOURCE: synthesized, adapted by a stage, or put there by the operator)
through check, calibrate and validate (and, optionally, a sales-only validation), exports the world
data/worlds/WORLD, runs the baseline and the privileged oracle on seeds 1-3 and ships worlds/WORLD. Settings come
from params/SOURCE.yaml (keyed by stage) and params/benchmark.yaml. `SHIPPED` names the repository's pipelines;
tests/pipeline/test_template.py holds each shipped file to its rendering, and `autovend init-source` writes a new
source's from the same template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SEEDS = (1, 2, 3)
BENCHMARK = "params/benchmark.yaml"
RUN_FLAGS = "--checkpoint off --force"
BASELINE_OUTS = "the runs' metrics (deterministic): a run folder also holds wall times, which would rewrite dvc.lock"
CHECK_DEPS = (
    "autovend/data/contract.py",
    "autovend/data/check.py",
    "autovend/data/source.py",
    "autovend/data/plausibility.py",
)
CALIBRATE_DEPS = ("autovend/calibration", "autovend/canonical.py", "autovend/png.py")
VALIDATE_DEPS = (
    "autovend/calibration",
    "autovend/validation",
    "autovend/demand",
    "autovend/canonical.py",
    "autovend/png.py",
)
EXPORT_DEPS = (
    "autovend/export",
    "autovend/world",
    "autovend/data/weather.py",
    "autovend/data/calendar.py",
    "autovend/data/hashing.py",
    "autovend/canonical.py",
    "autovend/calibration/result.py",
    "autovend/calibration/normalise.py",
    "autovend/demand/settings.py",
)
SYNTH_DEPS = (
    "autovend/data/synth",
    "autovend/demand",
    "autovend/data/weather.py",
    "autovend/data/calendar.py",
    "autovend/canonical.py",
)
BASELINE_DEPS = (
    "autovend/agents",
    "autovend/sim",
    "autovend/tools",
    "autovend/evaluation",
    "autovend/demand",
    "autovend/runner.py",
)
ORACLE_DEPS = (
    "autovend/agents/oracle",
    "autovend/agents/baseline/calls.py",
    "autovend/sim",
    "autovend/tools",
    "autovend/evaluation",
    "autovend/demand",
    "autovend/runner.py",
)
SHIP_DEPS = ("autovend/export/ship.py", "autovend/export/validation.py")
VALIDATION_FILES = (
    "validation.md",
    "verdict.json",
    "provenance.json",
    "plots/scores.csv",
    "plots/comparisons.csv",
    "plots/level_backtest.csv",
)
FIGURES = ("weekly.png", "subcategory.png", "comparisons.png")


@dataclass(frozen=True)
class PipelineSpec:
    """What differs between sources' pipelines; everything else is the template's.

    origin: how data/raw/SOURCE comes about: `synthesize` (the embedded operator), `adapt` (`adapt_cmd`, e.g.
    "nj-vending data/external/x.csv", from `adapt_input`) or `folder` (the operator puts the source there).
    build_source: False for a pipeline that exports another world from a source another pipeline calibrates.
    """

    source: str
    world: str
    header: str
    origin: Literal["synthesize", "adapt", "folder"] = "folder"
    adapt_cmd: str = ""
    adapt_input: str = ""
    build_source: bool = True
    sales_only: bool = False
    network: str | None = None
    suffix: str = ""  # appended to the world's stage names ("_cn20"), for a file holding several worlds
    nested: bool = True  # pipelines/NAME/dvc.yaml (stages run in the repository root: wdir ../..)


def _list(key: str, items: tuple[str, ...] | list[str], indent: str = "    ") -> list[str]:
    return [f"{indent}{key}:", *(f"{indent}  - {x}" for x in items)]


def _params(pairs: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    out = ["    params:"]
    for file, keys in pairs:
        out += [f"      - {file}:", *(f"          - {k}" for k in keys)]
    return out


def _uncached(path: str, comment: str = "") -> list[str]:
    return [f"      - {path}:{'  # ' + comment if comment else ''}", "          cache: false"]


class _Stages:
    def __init__(self, spec: PipelineSpec) -> None:
        self.s = spec
        self.lines: list[str] = []
        self.params = f"params/{spec.source}.yaml"
        self.raw = f"data/raw/{spec.source}"

    def stage(self, name: str, cmd: str | list[str], comment: str = "") -> None:
        self.lines.append(f"  {name}:")
        if comment:
            self.lines.append(f"    # {comment}")
        if self.s.nested:
            self.lines.append("    wdir: ../..")
        if isinstance(cmd, list):
            self.lines += ["    cmd:", *(f"      - {c}" for c in cmd)]
        else:
            self.lines.append(f"    cmd: {cmd}")

    def add(self, lines: list[str]) -> None:
        self.lines += lines


def _source_stages(st: _Stages) -> None:
    s, p = st.s, st.params
    if s.origin == "synthesize":
        st.stage(
            "synthesize",
            f"autovend synth -o {st.raw} --truth data/truth/{s.source}\n      --params {p} --settings {BENCHMARK}",
        )
        st.add(_list("deps", SYNTH_DEPS))
        st.add(_params([(p, ("synthesize",)), ("params/benchmark.yaml", ("demand",))]))
        st.add(_list("outs", [st.raw, f"data/truth/{s.source}"]))
    elif s.origin == "adapt":
        st.stage("adapt", f"autovend adapt {s.adapt_cmd} -o {st.raw} --force")
        st.add(_list("deps", [s.adapt_input, "autovend/data/adapters"]))
        st.add(_list("outs", [st.raw]))
    check = f"data/checks/{s.source}.json"
    st.stage("check", f"autovend check {st.raw} --json {check} --params {p}")
    st.add(_list("deps", [st.raw, *CHECK_DEPS]))
    st.add(_params([(p, ("check",))]))
    st.add(_list("outs", [check]))
    st.stage(
        "calibrate",
        f"autovend calibrate {st.raw} -o data/calibration/{s.source}\n      --params {p} --settings "
        f"params/benchmark.yaml\n      --report reports/{s.source}/calibration",
    )
    st.add(_list("deps", [st.raw, check, *CALIBRATE_DEPS]))
    st.add(_params([(p, ("check", "calibrate")), ("params/benchmark.yaml", ("demand",))]))
    st.add(["    outs:", f"      - data/calibration/{s.source}", *_uncached(f"reports/{s.source}/calibration")])
    _validate(st, "validate", f"reports/{s.source}/validation", sales_only=False)
    if s.sales_only:
        _validate(st, "validate_sales_only", f"reports/{s.source}/validation-sales-only", sales_only=True)


def _validate(st: _Stages, name: str, out: str, sales_only: bool) -> None:
    s, p = st.s, st.params
    if sales_only:
        cmd = f"autovend validate {st.raw} -o {out} --ignore-inventory\n      --params {p} --settings {BENCHMARK}"
        comment = "the same operator as if it had no inventory records: every machine on pre-window shelves"
    else:
        cmd = (
            f"autovend validate {st.raw} -o {out}\n      --calibration-out data/validation/{s.source}/calibration\n"
            f"      --params {p} --settings params/benchmark.yaml"
        )
        comment = ""
    st.stage(name, cmd, comment)
    st.add(_list("deps", [st.raw, f"data/checks/{s.source}.json", *VALIDATE_DEPS]))
    st.add(_params([(p, ("check", "calibrate", "validate")), ("params/benchmark.yaml", ("demand",))]))
    outs = [] if sales_only else [f"      - data/validation/{s.source}/calibration"]
    for f in VALIDATION_FILES:
        outs += _uncached(f"{out}/{f}")
    outs += _uncached(f"{out}/metrics.json", "every number of the validation (`dvc metrics show` reads headline.json)")
    outs += _uncached(f"{out}/plots/weekly.csv") + _uncached(f"{out}/plots/subcategory.csv")
    st.add(["    outs:", *outs])
    st.add(["    metrics:  # the model's headline numbers only, flat, so `dvc exp show` stays readable"])
    st.add(_uncached(f"{out}/headline.json"))
    st.add(["    plots:  # static figures: `dvc plots show/diff` render them offline (no Vega from a CDN)"])
    for fig in FIGURES:
        st.add(_uncached(f"{out}/{fig}"))


def _world_stages(st: _Stages) -> None:
    s, p, w = st.s, st.params, st.s.world
    world_dir, runs = f"data/worlds/{w}", f"data/runs/{w}"
    network = f"\n      --network {s.network}" if s.network else ""
    st.stage(
        "export_world",
        f"autovend export-world data/calibration/{s.source} {st.raw} -o {world_dir}{network}\n      --params {p} "
        "--settings params/benchmark.yaml",
    )
    st.add(_list("deps", [f"data/calibration/{s.source}", st.raw, *EXPORT_DEPS]))
    st.add(_params([(p, ("export",)), ("params/benchmark.yaml", ("demand", "economics"))]))
    st.add(_list("outs", [world_dir]))

    def runs_of(agent: str) -> list[str]:
        return [
            f"autovend run --world {world_dir} --agent {agent} --seed {n} --out {runs}/{agent}-s{n} {RUN_FLAGS}"
            for n in SEEDS
        ]

    st.stage(f"baseline{s.suffix}", runs_of("baseline"))
    st.add(_list("deps", [world_dir, *BASELINE_DEPS]))
    outs = [f"    outs:  # {BASELINE_OUTS}"]
    for n in SEEDS:
        outs += _uncached(f"{runs}/baseline-s{n}/metrics.json")
    st.add(outs)
    comment = "the privileged reference policy (reads the hidden demand model): the oracle of the normalised score"
    st.stage(f"oracle{s.suffix}", runs_of("oracle"), comment)
    st.add(_list("deps", [world_dir, *ORACLE_DEPS]))
    outs = ["    outs:  # deterministic: metrics and the daily ledger (run.json also holds wall times)"]
    for n in SEEDS:
        outs += _uncached(f"{runs}/oracle-s{n}/metrics.json") + _uncached(f"{runs}/oracle-s{n}/daily.csv")
    st.add(outs)
    validation = f"reports/{s.source}/validation"
    cmd = f"autovend world ship {world_dir} -o worlds/{w} --validation {validation}"
    cmd += "".join(f" --run {runs}/baseline-s{n}" for n in SEEDS)
    cmd += "".join(f" --oracle-run {runs}/oracle-s{n}" for n in SEEDS)
    st.stage(f"ship{s.suffix}", cmd)
    deps = [world_dir, *(f"{runs}/baseline-s{n}/metrics.json" for n in SEEDS)]
    for n in SEEDS:
        deps += [f"{runs}/oracle-s{n}/metrics.json", f"{runs}/oracle-s{n}/daily.csv"]
    deps += [f"{validation}/metrics.json", f"{validation}/verdict.json", f"{validation}/provenance.json", *SHIP_DEPS]
    st.add(_list("deps", deps))
    st.add(["    outs:", *_uncached(f"worlds/{w}")])


def render_pipeline(spec: PipelineSpec) -> str:
    """The dvc.yaml text of `spec` (header comment, then the stages)."""
    st = _Stages(spec)
    if spec.build_source:
        _source_stages(st)
    _world_stages(st)
    header = [f"# {line}".rstrip() for line in spec.header.strip().splitlines()]
    return "\n".join([*header, "stages:", *st.lines]) + "\n"


SHIPPED: dict[str, PipelineSpec] = {
    "dvc.yaml": PipelineSpec(
        source="synthetic-cn",
        world="cn20",
        origin="synthesize",
        sales_only=True,
        network="autovend/export/networks/paper-cn20.csv",
        suffix="_cn20",
        nested=False,
        header="""\
The default pipeline: the embedded synthetic operator -> check -> calibrate -> validate (with its inventory
records, and as if it had none) -> world ->
the baseline's three seeds on it, and the privileged oracle's (the headroom reference of the normalised score)
-> the shipped worlds/cn20 (the world with its results in its README, the oracle's in its manifest).
Every path comes from `cmd`; every setting from params/ (keyed by stage). Run: `make repro` or `dvc repro`.
Rendered from autovend/pipeline/template.py (tests/pipeline/test_template.py holds it to the template).""",
    ),
    "pipelines/nj-vending/dvc.yaml": PipelineSpec(
        source="nj-vending",
        world="nj5",
        origin="adapt",
        adapt_cmd="nj-vending data/external/vending_machine_sales.csv",
        adapt_input="data/external/vending_machine_sales.csv",
        header="""\
The real-data pipeline: the public NJ vending records (5 US machines, 2022) through the same contract,
calibration and validation. Needs the CSV at data/external/vending_machine_sales.csv (docs/real-data.md says
where it comes from): `make real-data` or
`dvc repro pipelines/nj-vending/dvc.yaml`. Paths are relative to the repository root (wdir).
Rendered from autovend/pipeline/template.py (tests/pipeline/test_template.py holds it to the template).""",
    ),
    "pipelines/synthetic-cn99/dvc.yaml": PipelineSpec(
        source="synthetic-cn",
        world="cn99",
        build_source=False,
        header="""\
The embedded synthetic operator at full scale: every one of its 99 machines is a device of worlds/cn99,
for scale studies. Builds on the default pipeline's calibration and validation (dvc.yaml); run:
`make worlds` or `dvc repro pipelines/synthetic-cn99/dvc.yaml`. Paths are relative to the repository root.
Rendered from autovend/pipeline/template.py (tests/pipeline/test_template.py holds it to the template).""",
    ),
}


def new_source_spec(source: str, world: str) -> PipelineSpec:
    """The pipeline of a new source whose folder the operator puts at data/raw/SOURCE (`autovend init-source`)."""
    return PipelineSpec(
        source=source,
        world=world,
        header=f"""\
The pipeline of the source {source}: data/raw/{source} (a source folder under the contract: docs/data-contract.md;
`autovend adapt ... -o data/raw/{source}` writes one from an export) -> check -> calibrate -> validate -> world
data/worlds/{world} -> the baseline's and the privileged oracle's seeds 1-3 -> worlds/{world} (shipped: its
validation verdict and results in its README). Settings: params/{source}.yaml. Run:
`dvc repro pipelines/{source}/dvc.yaml`, then `autovend world install worlds/{world}` (docs/operators.md).
Written by `autovend init-source` from autovend/pipeline/template.py.""",
    )
