"""Reading a section of a params YAML file into a pydantic settings model (one place for all stages)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from autovend.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


MAX_YAML_BYTES = 1_000_000  # a settings file is a few kB; a larger one is refused before it is parsed
MAX_YAML_NODES = 100_000  # values in a file, counting each use of an alias (&a / *a) anew
MAX_YAML_DEPTH = 100  # nesting of lists and mappings


def _where(node: Any) -> str:
    mark = getattr(node, "start_mark", None)
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"


def _measure(root: Any, what: str) -> None:
    """Refuse a YAML node graph too deep, too large once its aliases are expanded, or with a key given twice."""
    import yaml

    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not done and id(node) in sizes:
            continue
        if not done and id(node) in visiting:
            raise ConfigError(f"{what}: an alias at {_where(node)} refers to a value that holds it. Fix: remove it")
        children: list[Any] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            seen: dict[str, Any] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in seen:
                        raise ConfigError(
                            f"{what}: the key {key.value!r} is given twice in one mapping ({_where(seen[key.value])} "
                            f"and {_where(key)}); YAML would keep only the last. Fix: give each key once"
                        )
                    seen[key.value] = key
                children += [key, value]
        if done:
            visiting.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_YAML_NODES:
                raise ConfigError(
                    f"{what}: holds more than {MAX_YAML_NODES:,} values once its aliases (*name) are expanded. "
                    "Fix: write the settings out without aliases that repeat each other"
                )
            continue
        if depth > MAX_YAML_DEPTH:
            raise ConfigError(f"{what}: nested more than {MAX_YAML_DEPTH} levels deep at {_where(node)}")
        visiting.add(id(node))
        stack.append((node, depth, True))
        stack += [(c, depth + 1, False) for c in children if id(c) not in sizes]


def read_yaml_value(path: str | Path, what: str = "settings file") -> Any:
    """The value in the YAML file at `path`; ConfigError naming the file, where and the fix for anything wrong.

    The file must be UTF-8 text of at most `MAX_YAML_BYTES`; a key given twice in one mapping (YAML keeps the
    last silently), nesting deeper than `MAX_YAML_DEPTH` and aliases that expand past `MAX_YAML_NODES` values
    are refused. `what` names the file in messages ("sweep spec", "mapping file", ...).
    """
    import yaml  # only when a settings file is read (not on the way to playing a world)

    path = Path(path)
    label = f"{what} {path}"
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"cannot read {label}: it does not exist; give the path of the file") from None
    except IsADirectoryError:
        raise ConfigError(f"cannot read {label}: it is a folder; give the path of the YAML file") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {label}: {exc.strerror or exc}") from None
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(f"{label} is larger than {MAX_YAML_BYTES:,} bytes: not a settings file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start]
        raise ConfigError(f"{label}, line {line}: not UTF-8 text (byte 0x{byte:02x}). Fix: save it as UTF-8") from None
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)  # refuses control characters (a NUL byte) here already
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node, label)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{label}: not valid YAML{at}: {reason}. Fix: the YAML syntax (key: value)") from None
    except RecursionError:
        raise ConfigError(f"{label}: nested too deep to read") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml(path: str | Path) -> dict:
    """The mapping in a YAML file; ConfigError naming the file if it cannot be read or is not a mapping."""
    raw = read_yaml_value(path, "params file")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"params file {path} must hold a mapping of section names to settings")
    return raw


def where_in(loc: tuple[Any, ...], prefix: str = "") -> str:
    """A pydantic error location as the reader of the YAML sees it: `key agents, entry 2, key base_url`.

    `prefix` (a section name) goes before the first key: `key check.max_qty_per_line`.
    """
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"entry {item + 1}")
        else:
            parts.append(f"key {prefix}.{item}" if prefix and not parts else f"key {item}")
    return ", ".join(parts) or (f"the `{prefix}` section" if prefix else "the top level")


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The setting names of the (nested) model a location's last key belongs to, when it is a model."""
    current: Any = model
    for part in loc[:-1]:
        fields = getattr(current, "model_fields", None)
        if not isinstance(part, str) or not fields or part not in fields:
            return []
        current = fields[part].annotation
    fields = getattr(current, "model_fields", None)
    return list(fields) if isinstance(fields, dict) else []


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def problem_lines(exc: ValidationError, model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """One line in words per problem of a pydantic validation: where, what is wrong, what was given, the fix.

    The one reader of pydantic errors for settings files (params sections, the sweep spec, agent configs,
    mapping files), so that none shows pydantic's own dump. `model` names the known keys of an unknown one;
    `prefix` is the section the keys are in.
    """
    lines = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        where = where_in(loc, prefix)
        kind = err.get("type", "")
        msg = str(err.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        msg = re.sub(r" or instance of \w+", "", msg).replace("a valid dictionary", "a mapping (key: value lines)")
        if kind == "extra_forbidden":
            known = _fields_at(model, loc) if model is not None and loc else []
            names = f" (the keys are: {', '.join(known)})" if known else ""
            lines.append(f"{where}: is no setting here; remove it or correct its spelling{names}")
        elif kind == "missing":
            lines.append(f"{where}: is missing; add it")
        elif not loc:  # a rule across keys (a model validator): its message names them
            lines.append(f"{where}: {msg}; change the values it names")
        elif kind in ("value_error", "assertion_error"):  # our own words, which say what was given
            lines.append(f"{where}: {msg}")
        else:
            lines.append(f"{where}: {msg} (got {_shown(err.get('input'))}); change the value")
    return lines


def load_section(model: type[M], path: str | Path | None, section: str) -> M:
    """Validate section `section` of the YAML file at `path` as `model`.

    The model's defaults when `path` is None or the section is missing (or empty); a ConfigError naming the
    file, the section, each bad key, what is wrong with it and the fix when it does not validate (a section
    that is no mapping, say `check: 3`, is refused too).
    """
    if path is None:
        return model()
    raw = read_yaml(path).get(section)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"params file {path}: the `{section}` section must be a mapping of setting names to values, got "
            f"{_shown(raw)}; write one `name: value` per line under `{section}:` (or remove the section)"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        lines = "\n".join(f"  - {line}" for line in problem_lines(exc, model, section))
        raise ConfigError(
            f"params file {path}: invalid `{section}` settings:\n{lines}\n"
            f"Fix: correct these keys under `{section}:` in {path}"
        ) from None


def error_lines(exc: ValidationError, section: str) -> list[str]:
    """Each problem of a validation error in words: the key (section.key.sub), what is wrong, what was given.

    No pydantic type names or documentation links: "export.climate: unknown climate 'Kyiv'; ... (given 'Kyiv')".
    """
    out = []
    for err in exc.errors(include_url=False):
        key = ".".join([section, *(str(p) for p in err.get("loc", ()))])
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if err.get("type") == "extra_forbidden":
            msg = "not a setting of this section (a typo, or a key of another section?)"
        given = err.get("input")
        shown = "" if err.get("type") == "missing" or isinstance(given, dict) else f" (given {given!r})"
        out.append(f"{key}: {msg}{shown}")
    return out
