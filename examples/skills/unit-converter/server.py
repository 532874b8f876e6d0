"""A small MCP server over stdio (JSON-RPC 2.0, one message per line), with the Python standard
library only: `convert` and `list_units`. skillbox starts it, in its sandbox and in this folder,
when the `unit-converter` skill is loaded."""

import json
import sys

# Each unit: its dimension and its factor to the dimension's base unit (m, kg, L).
UNITS = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0),
    "km": ("length", 1000.0), "in": ("length", 0.0254), "ft": ("length", 0.3048),
    "yd": ("length", 0.9144), "mi": ("length", 1609.344),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "t": ("mass", 1000.0),
    "oz": ("mass", 0.028349523125), "lb": ("mass", 0.45359237),
    "ml": ("volume", 0.001), "l": ("volume", 1.0), "gal": ("volume", 3.785411784),
    "qt": ("volume", 0.946352946), "floz": ("volume", 0.0295735295625),
    "degc": ("temperature", None), "degf": ("temperature", None), "k": ("temperature", None),
}
TO_KELVIN = {"degc": lambda v: v + 273.15, "degf": lambda v: (v - 32) * 5 / 9 + 273.15, "k": lambda v: v}
FROM_KELVIN = {"degc": lambda v: v - 273.15, "degf": lambda v: (v - 273.15) * 9 / 5 + 32, "k": lambda v: v}

TOOLS = [
    {
        "name": "convert",
        "description": "Convert a value from one unit to another of the same kind (length, mass, volume, temperature).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The quantity to convert"},
                "from": {"type": "string", "description": "Its unit, e.g. km, lb, degF, gal"},
                "to": {"type": "string", "description": "The unit wanted, e.g. mi, kg, degC, l"},
            },
            "required": ["value", "from", "to"],
        },
    },
    {
        "name": "list_units",
        "description": "List the units convert knows, by kind.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def convert(arguments):
    value = arguments.get("value")
    source = str(arguments.get("from", "")).lower().replace("°", "deg")
    target = str(arguments.get("to", "")).lower().replace("°", "deg")
    if not isinstance(value, (int, float)):
        raise ValueError("`value` must be a number")
    for unit in (source, target):
        if unit not in UNITS:
            raise ValueError(f"unknown unit `{unit}`; call list_units for the units known")
    if UNITS[source][0] != UNITS[target][0]:
        raise ValueError(f"cannot convert {UNITS[source][0]} ({source}) to {UNITS[target][0]} ({target})")
    if UNITS[source][0] == "temperature":
        result = FROM_KELVIN[target](TO_KELVIN[source](value))
    else:
        result = value * UNITS[source][1] / UNITS[target][1]
    return f"{value} {arguments['from']} = {round(result, 6)} {arguments['to']}"


def list_units(_arguments):
    kinds = {}
    for unit, (kind, _) in UNITS.items():
        kinds.setdefault(kind, []).append(unit)
    return "\n".join(f"{kind}: {', '.join(units)}" for kind, units in kinds.items())


def answer(request):
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "units", "version": "1.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        handlers = {"convert": convert, "list_units": list_units}
        handler = handlers.get(params.get("name"))
        if handler is None:
            raise LookupError(f"no tool `{params.get('name')}`")
        try:
            text, failed = handler(params.get("arguments") or {}), False
        except ValueError as error:
            text, failed = str(error), True
        return {"content": [{"type": "text", "text": text}], "isError": failed}
    raise LookupError(f"no method `{method}`")


for line in sys.stdin:
    try:
        request = json.loads(line)
    except json.JSONDecodeError:
        continue
    if "id" not in request:
        continue  # a notification
    try:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
    except LookupError as error:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": str(error)}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
