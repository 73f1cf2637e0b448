"""HTML forms generated from the tools' JSON input schemas (the play page; play.js turns a form into the arguments).

Every property of a tool's input schema becomes a field named by `data-key`:

- a string: a text box (a text area when it may be long: over 200 characters allowed, or the tool's only
  required argument, such as query_sql's `sql`); with `enum`, a drop-down;
- an integer or a number: a number box with the schema's minimum and maximum (step 1 for integers);
- a boolean: a drop-down (unset, true, false);
- an array of objects (the batches of place_order, restock, ...): a table of rows, one field per item
  property, with buttons to add and drop rows (`data-array` names the property).

Optional fields left empty are left out of the arguments; required ones are marked with *. Device and
product fields offer the known ids as suggestions (`<datalist>`), nothing more: the forms do not validate
(`novalidate`), the tool checks everything and the person gets the same error message an agent would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autovend.console.html import esc

LONG_TEXT = 200  # strings allowed to be longer than this get a text area
SUGGESTIONS = {"device_id": "device-ids", "sku_id": "sku-ids"}  # property name -> datalist id


def _attrs(schema: Mapping[str, Any]) -> str:
    out = []
    for key in ("minimum", "maximum", "minLength", "maxLength"):
        if key in schema:
            name = {"minimum": "min", "maximum": "max", "minLength": "minlength", "maxLength": "maxlength"}[key]
            out.append(f' {name}="{esc(schema[key])}"')
    return "".join(out)


def scalar_input(key: str, schema: Mapping[str, Any], required: bool, long_text: bool = False) -> str:
    """The input element of one scalar property (see the module docstring)."""
    data = f'data-key="{esc(key)}"'
    kind = schema.get("type")
    if "enum" in schema:
        blank = "" if required else '<option value="">(default)</option>'
        options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in schema["enum"])
        return f"<select {data}>{blank}{options}</select>"
    if kind == "boolean":
        return f'<select {data}><option value="">(default)</option><option>true</option><option>false</option></select>'
    if kind in ("integer", "number"):
        step = "1" if kind == "integer" else "any"
        return f'<input type="number" step="{step}" {data}{_attrs(schema)}>'
    if long_text:
        return f'<textarea rows="4" {data}{_attrs(schema)}></textarea>'
    suggest = f' list="{SUGGESTIONS[key]}"' if key in SUGGESTIONS else ""
    return f'<input type="text" {data}{suggest}{_attrs(schema)}>'


def _label(key: str, required: bool) -> str:
    return f"{esc(key)}{' *' if required else ''}"


def array_rows(key: str, schema: Mapping[str, Any], rows: int = 1) -> str:
    """The rows table of an array-of-objects property."""
    item = schema["items"]
    props: Mapping[str, Any] = item.get("properties", {})
    required = set(item.get("required", ()))
    head = "".join(
        f'<th title="{esc(p.get("description", ""))}">{_label(name, name in required)}</th>'
        for name, p in props.items()
    )
    cells = "".join(f"<td>{scalar_input(name, p, name in required)}</td>" for name, p in props.items())
    row = (
        f'<tr class="row">{cells}<td><button type="button" class="drop-row" title="drop this row">−</button></td></tr>'
    )
    hint = esc(schema.get("description", ""))
    return (
        f'<div class="field"><label>{_label(key, True)} <span class="hint">{hint}</span></label>'
        f'<table class="rows" data-array="{esc(key)}"><thead><tr>{head}<th></th></tr></thead>'
        f'<tbody>{row * rows}</tbody></table><button type="button" class="add-row">+ row</button></div>'
    )


def tool_form(tool: Mapping[str, Any]) -> str:
    """The form of one tool listing entry (name, kind, description, input_schema), folded in a <details>."""
    name = str(tool["name"])
    schema: Mapping[str, Any] = tool.get("input_schema", {})
    props: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    fields = []
    for key, prop in props.items():
        if prop.get("type") == "array" and prop.get("items", {}).get("type") == "object":
            fields.append(array_rows(key, prop))
            continue
        need = key in required
        long_text = prop.get("maxLength", 0) > LONG_TEXT or (need and len(props) == 1 and prop.get("type") == "string")
        fields.append(
            f'<div class="field"><label>{_label(key, need)} <span class="hint">{esc(prop.get("description", ""))}'
            f"</span></label>{scalar_input(key, prop, need, long_text)}</div>"
        )
    body = "".join(fields) or '<p class="facts">no arguments</p>'
    button = "end the day" if name == "end_day" else f"call {name}"
    return (
        f'<details id="tool-{esc(name)}"><summary>{esc(name)} <span class="kind">{esc(tool.get("kind", ""))}</span>'
        f'</summary><div class="desc">{esc(tool.get("description", ""))}</div>'
        f'<form class="tool-form" data-tool="{esc(name)}" novalidate>{body}'
        f'<button type="submit" class="primary">{esc(button)}</button></form></details>'
    )


def datalists(device_ids: Sequence[str], skus: Sequence[tuple[str, str]]) -> str:
    """The suggestion lists of device and product ids (products with their names)."""
    devices = "".join(f'<option value="{esc(d)}">' for d in device_ids)
    products = "".join(f'<option value="{esc(s)}">{esc(n)}</option>' for s, n in skus)
    return f'<datalist id="device-ids">{devices}</datalist><datalist id="sku-ids">{products}</datalist>'
