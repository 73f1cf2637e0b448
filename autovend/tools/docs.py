"""docs/tools.md, generated from the one tool registry: the tool table, each tool's parameters and result.

    python -m autovend.tools.docs > docs/tools.md          # or: make docs

The prose lives in the template `tools_doc.md` beside this module; the generated parts fill its
placeholders: `{{tool_table}}` (name, kind, parameters, what a result holds), `{{tool_reference}}`
(each tool's description as the agent reads it, its input and output schemas as field outlines,
each with the full JSON schema folded) and `{{sql_schema}}` (the record tables as `query_sql`
describes them). A test keeps the committed docs/tools.md equal to `render_tools_doc()`.
"""

from __future__ import annotations

import json
import string
from importlib.resources import files
from typing import Any

from autovend.currency import fill_money, fill_text
from autovend.tools.registry import KIND_PREFIX, TOOLS, ToolDef
from autovend.tools.sql import schema_text
from autovend.tools.tables import MONEY_NOTE

TEMPLATE = "tools_doc.md"
# The schemas' placeholders as the docs show them (a served world fills in its own: `tool_listing`).
WORDS = {
    "currency": "<currency>",
    "minor_unit": "<minor_unit>",
    "minor_units": "<minor_units>",
    "band_lo": "<band_lo>",
    "band_hi": "<band_hi>",
}
MONEY = fill_text(MONEY_NOTE, WORDS)
SQL_SCHEMA_SHOWN = "(the table list of “The SQL schema” below)"


def _placeholders(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def shown_description(tool: ToolDef) -> str:
    """The description the agent reads, with the world's numbers shown as <name> (they depend on the world)."""
    names = _placeholders(KIND_PREFIX[tool.kind] + tool.summary)
    facts = {name: f"<{name}>" for name in names}
    if "sql_schema" in facts:
        facts["sql_schema"] = SQL_SCHEMA_SHOWN
    if "supplier_others" in facts:  # a world's other suppliers, if a scenario adds any (docs/scenarios.md)
        facts["supplier_others"] = (
            ", the only supplier unless the world has others (then named here, and listed by get_catalog)"
        )
    return tool.description(facts)


# ------------------------------------------------------------------------------------------ schema outlines


def type_text(node: dict[str, Any]) -> str:
    """A short type: integer, money, "place_order", one of 1, 3, 7, 30, [money, money], list of string, object..."""
    any_of = node.get("anyOf")
    if any_of is not None:
        kinds = [type_text(x) for x in any_of if x != {"type": "null"}]
        return " or ".join(kinds) + (" or null" if len(kinds) < len(any_of) else "")
    if "const" in node:
        return json.dumps(node["const"], ensure_ascii=False)
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
    kind = node.get("type")
    if kind == "number" and node.get("description") == MONEY:
        return "money"
    if kind == "array":
        if "prefixItems" in node:
            return "[" + ", ".join(type_text(x) for x in node["prefixItems"]) + "]"
        item = node.get("items", {})
        if _is_table(item):
            return "list of tables"
        return "list of objects" if item.get("type") == "object" else f"list of {type_text(item)}"
    if kind == "object" and _is_table(node):
        return "table"
    return str(kind or "any")


def _is_table(node: dict[str, Any]) -> bool:
    props = node.get("properties", {})
    return "prefixItems" in props.get("columns", {}) and "rows" in props


def _table_line(columns: dict[str, Any], rows: dict[str, Any]) -> str:
    names = [c["const"] for c in columns["prefixItems"]]
    cells = rows["items"]["prefixItems"]
    return ", ".join(f"`{n}` {type_text(c)}" for n, c in zip(names, cells, strict=True))


def _note(node: dict[str, Any]) -> str:
    text = node.get("description", "")
    if text == MONEY:
        return ""
    bounds = []
    for key, sign in (("minimum", ">="), ("maximum", "<="), ("minLength", "length >="), ("maxLength", "length <=")):
        if key in node:
            bounds.append(f"{sign} {node[key]}")
    for key, word in (("minItems", "items"), ("maxItems", "items")):
        if key in node and node.get("type") == "array" and "prefixItems" not in node:
            bounds.append(f"{'>=' if key == 'minItems' else '<='} {node[key]} {word}")
    extra = f" ({', '.join(bounds)})" if bounds else ""
    return (f": {text}" if text else "") + extra if (text or extra) else ""


def outline(schema: dict[str, Any], depth: int = 0) -> list[str]:
    """The properties of an object schema as a nested Markdown list (`?` marks a key that may be absent)."""
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    pad = "  " * depth
    lines: list[str] = []
    table = _is_table(schema)
    for name, node in props.items():
        if table and name in ("columns", "rows"):
            if name == "columns":
                cells = _table_line(props["columns"], props["rows"])
                head = "- `columns`, `rows` (table): " if depth == 0 else "- "
                lines.append(f"{pad}{head}a row holds, in order, {cells}")
            continue
        mark = "" if name in required else "?"
        lines.append(f"{pad}- `{name}`{mark} ({type_text(node)}){_note(node)}")
        inner = node.get("items", node) if node.get("type") == "array" else node
        inner = next((x for x in inner.get("anyOf", []) if x.get("type") == "object"), inner)
        if inner.get("type") == "object" and inner.get("properties"):
            lines.extend(outline(inner, depth + 1))
    return lines


# ------------------------------------------------------------------------------------------ sections


def parameters_text(tool: ToolDef) -> str:
    """The parameter list of the tool table: `items[{sku_id, qty, supplier_id?}]`, `page?, page_size?` or none."""
    props = tool.input_schema["properties"]
    required = set(tool.input_schema.get("required", []))
    if not props:
        return "none"
    parts = []
    for name, node in props.items():
        if node.get("type") == "array" and node["items"].get("type") == "object":
            item = node["items"]
            fields = [f + ("" if f in item.get("required", []) else "?") for f in item["properties"]]
            parts.append(f"{name}[{{{', '.join(fields)}}}]")
        else:
            parts.append(name + ("" if name in required else "?"))
    return "`" + ", ".join(parts) + "`"


def tool_table() -> str:
    """| tool | kind | parameters | returns | — one row per tool, in the registry's order."""
    lines = ["| tool | kind | parameters | returns |", "|---|---|---|---|"]
    for t in TOOLS:
        returns = " ".join((t.result.__doc__ or "").split())
        lines.append(f"| `{t.name}` | {t.kind} | {parameters_text(t)} | {returns} |")
    return "\n".join(lines)


def _folded(title: str, schema: dict[str, Any]) -> list[str]:
    body = json.dumps(schema, ensure_ascii=False)  # one line: the outline above is the readable form
    return [f"<details><summary>{title} (JSON)</summary>", "", "```json", body, "```", "", "</details>"]


def tool_reference() -> str:
    """One section per tool: description, parameters and result as outlines, the JSON schemas folded."""
    out: list[str] = []
    for t in TOOLS:
        out += [f"### `{t.name}`", "", f"Kind: {t.kind}. Result model: `{t.result.__name__}`.", ""]
        out += ["```text", shown_description(t), "```", ""]
        input_schema, output_schema = fill_money(t.input_schema, WORDS), fill_money(t.output_schema, WORDS)
        params = outline(input_schema)
        out += ["Parameters:", ""] + (params or ["- none (send `{}`)"]) + [""]
        out += _folded("input schema", input_schema) + [""]
        out += [f"Result: {' '.join((t.result.__doc__ or '').split())}", ""] + outline(output_schema) + [""]
        out += _folded("output schema", output_schema) + [""]
    return "\n".join(out).rstrip("\n")


def render_tools_doc() -> str:
    """docs/tools.md: the template with the generated sections filled in."""
    template = files("autovend.tools").joinpath(TEMPLATE).read_text(encoding="utf-8")
    parts = {
        "tool_table": tool_table(),
        "tool_reference": tool_reference(),
        "sql_schema": schema_text(WORDS["currency"]),
    }
    text = template
    for key, value in parts.items():
        marker = "{{" + key + "}}"
        if text.count(marker) != 1:
            raise ValueError(f"{TEMPLATE} must hold {marker} exactly once")
        text = text.replace(marker, value)
    return text


def main() -> None:
    """Print docs/tools.md (UTF-8 whatever the terminal's encoding)."""
    import sys

    sys.stdout.buffer.write(render_tools_doc().encode("utf-8"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
