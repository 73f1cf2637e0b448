"""The package's layers: every import of autovend runs down, from a door to the environment to the tools to the
simulator and the data, never back up.

`LAYERS` lists autovend's parts (its subpackages and top-level modules) from the ground up. A module may import
its own part and the parts of lower layers, nothing else: not a higher layer, and not another part of its own
layer (parts that share a layer know nothing of each other). Every import counts: at module level, under
`if TYPE_CHECKING:`, inside functions (lazy imports) and `importlib.import_module("autovend...")` with a literal
name. A failure names the file, the line and the import that runs the wrong way.

Reading the table from the top: the doors (cli; mcp, console, sweep) drive episodes through the runner, a player
outside the process through the one outside-player driver (`autovend.outside`); the runner runs an agent and hands the run to the evaluation; agents
play through the in-process session (`autovend.session`, a door of its own) or the gymnasium env; both stand on
the environment (`autovend.env`: simulator + tools + the privilege boundary), which serves the tool definitions
(`autovend.tools`), which read the simulator (`autovend.sim`) of a world (`autovend.world`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import autovend

PACKAGE = Path(autovend.__file__).parent
TOP = PACKAGE.name
ROOT = "autovend"  # the package's own __init__ (its version) is a part of its own
Layers = tuple[tuple[str, tuple[str, ...], str], ...]

# (layer, its parts, what the layer is), from the ground up
LAYERS: Layers = (
    ("package", (ROOT, "errors"), "the version and the named exceptions"),
    (
        "utilities",
        (
            *("rng", "marks", "extras", "rundir", "memory", "png", "progress", "provenance", "access", "webserve"),
            "currency",
            "parallel",
            "distinct",
        ),
        "small helpers that know nothing of vending (access: who may reach a web door; webserve: serving one; "
        "currency: money's words; parallel: where a large job's tasks run, in process or on Dask; distinct: "
        "np.unique's sorted values by a sort)",
    ),
    ("files", ("canonical", "config", "io", "shipped", "runlock"), "reading and writing files, settings"),
    ("demand", ("demand",), "the demand model"),
    ("data", ("data",), "raw records: the contract, the checker, synthetic and real sources"),
    ("world", ("world",), "world bundles and the in-memory world"),
    ("model", ("sim", "calibration"), "the simulator of a world; calibration of the demand model from records"),
    ("built on calibration", ("validation", "export"), "held-out validation; building a world from a calibration"),
    ("pipeline", ("pipeline",), "the DVC stage entry points"),
    ("tools", ("tools",), "the 18 tool definitions and handlers, the SQL sandbox, views, prompts, the JSON guard"),
    ("environment", ("env",), "the one core an agent touches: VendingEnv, its episode, the privilege boundary"),
    (
        "in-process doors",
        ("session", "gym", "arrays"),
        "ToolSession (by tool name), the gymnasium env, the array env (N runs stepped together in numpy)",
    ),
    ("agents", ("agents", "vector"), "the baseline, oracle and LLM agents; the vector env over gym"),
    ("evaluation", ("evaluation",), "metrics, reports and verification of runs (it replays them with the oracle)"),
    ("run checkpoints", ("checkpoints",), "the file a run folder keeps while a run is under way (plain values only)"),
    ("runner", ("runner",), "running an agent through an episode into a run folder"),
    ("outside", ("outside",), "the one driver of an outside player: the runner on a thread, fed from a queue"),
    (
        "doors",
        ("mcp", "console", "sweep"),
        "the MCP server (stdio, HTTP, scored play); the web console (replay, play by hand); sweeps",
    ),
    ("cli", ("cli",), "the command line"),
)


def layer_of(layers: Layers) -> dict[str, int]:
    """Part -> the index of its layer."""
    return {part: i for i, (_, parts, _) in enumerate(layers) for part in parts}


LAYER_OF = layer_of(LAYERS)


def part_of(module: str) -> str:
    """The part of autovend a dotted module name belongs to: its first name under autovend, or ROOT."""
    names = module.split(".")
    return ROOT if len(names) == 1 else names[1]


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """The dotted name of the module at `path` under the package folder `root`, and whether it is an __init__."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the package `root` in the file, wherever it stands."""
    name, is_package = module_name(path, root)
    top = root.name
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            found.append((node.lineno, origin))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return [(line, target) for line, target in found if target == top or target.startswith(top + ".")]


def wrong_way(root: Path, layers: Layers) -> list[str]:
    """Every import under `root` that runs up a layer or across to another part of its own layer."""
    level = layer_of(layers)
    problems = []
    for path in sorted(root.rglob("*.py")):
        name, _ = module_name(path, root)
        mine = part_of(name)
        for line, target in imports(path, root):
            theirs = part_of(target)
            if theirs == mine:
                continue
            rel = path.relative_to(root.parent).as_posix()
            if level[theirs] > level[mine]:
                problems.append(
                    f"{rel}:{line} imports {target}: {mine} (layer {layers[level[mine]][0]!r}) stands below "
                    f"{theirs} (layer {layers[level[theirs]][0]!r}) and may not import it"
                )
            elif level[theirs] == level[mine]:
                problems.append(
                    f"{rel}:{line} imports {target}: {mine} and {theirs} share the layer "
                    f"{layers[level[mine]][0]!r} and know nothing of each other"
                )
    return problems


def parts_on_disk(root: Path) -> set[str]:
    """The parts of the package: its subpackages and top-level modules, and ROOT for its __init__."""
    out = {ROOT}
    for path in root.iterdir():
        if path.is_dir() and (path / "__init__.py").is_file():
            out.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            out.add(path.stem)
    return out


def test_every_part_of_the_package_has_its_layer():
    missing = parts_on_disk(PACKAGE) - set(LAYER_OF)
    gone = set(LAYER_OF) - parts_on_disk(PACKAGE)
    assert not missing, f"place these in LAYERS: {sorted(missing)}"
    assert not gone, f"LAYERS names parts that are gone: {sorted(gone)}"
    assert len(LAYER_OF) == sum(len(parts) for _, parts, _ in LAYERS), "a part stands in two layers"


def test_every_import_runs_down():
    problems = wrong_way(PACKAGE, LAYERS)
    assert not problems, "imports that run the wrong way:\n" + "\n".join(problems)


def test_the_doors_stand_above_the_environment_and_the_tools_below_it():
    env = LAYER_OF["env"]
    assert LAYER_OF["tools"] < env
    doors = ("session", "gym", "arrays", "mcp", "console", "sweep", "cli", "outside")
    assert all(LAYER_OF[door] > env for door in doors)


TOY_LAYERS: Layers = (("ground", (ROOT, "low"), ""), ("top", ("high",), ""))


@pytest.fixture
def toy_package(tmp_path):
    """A package `toy` with two layers: `low` (a module) below `high` (a subpackage)."""
    root = tmp_path / "toy"
    (root / "high").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "high" / "__init__.py").write_text("")
    (root / "high" / "door.py").write_text("from toy.low import thing\n")
    return root


@pytest.mark.parametrize(
    "source",
    [
        "from toy.high.door import x\n",  # at module level
        "import toy.high\n",
        "from .high import door\n",  # relative
        "def f():\n    from toy.high import door\n",  # lazy, inside a function
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.high import door\n",
        "import importlib\n\ndef f():\n    return importlib.import_module('toy.high.door')\n",
    ],
)
def test_an_import_up_is_named_wherever_it_hides(toy_package, source):
    (toy_package / "low.py").write_text("thing = 1\n" + source)
    problems = wrong_way(toy_package, TOY_LAYERS)
    assert len(problems) == 1
    assert problems[0].startswith("toy/low.py:") and "toy.high" in problems[0], problems


def test_imports_down_and_within_a_part_pass(toy_package):
    (toy_package / "low.py").write_text("thing = 1\n")
    (toy_package / "high" / "other.py").write_text("from toy.high import door\nfrom . import door as d\n")
    assert wrong_way(toy_package, TOY_LAYERS) == []
