#!/usr/bin/env python3
"""Generates ``octet_host/_generated.py`` from docs/serve-protocol.schema.json.

Usage: generate.py [SCHEMA] [OUTPUT] [ERRORS] [OPERATIONS]   (defaults: the
repository's schema, the package's modules; an output ``-`` prints that module).
Standard library only.

The module holds, all from the schema:
- a TypedDict per output line (the root ``oneOf``) and the union ``OutputLine``, and
  one per line the clients yield as an event (``TraceEvent``, ...: :data:`EVENT_LINES`);
- a TypedDict per control line (``$defs.control_line``) and the tuple ``OPS``;
- per service kind (``$defs.service_kinds``, the method table and serve's brokers): a
  TypedDict of each method's params and result, a ``Protocol`` class with one method
  per request whose default body refuses it as ``unsupported_feature``, the
  dispatch table ``SERVICE_KINDS`` and ``BoundServices``, the TypedDict ``start``'s
  ``services`` is checked against.

And ``octet_host/_error_codes.py`` holds ``ERROR_CODES``: each error code of serve
(``$defs.error_codes``) and the name of the exception class it raises, which
``errors.py`` turns into its table (a module of its own, which imports nothing, so that
``errors.py`` and ``_generated.py`` do not import each other).

And ``octet_host/_operations.py`` holds both method surfaces, ``Operations`` (under
``octet_host.Host``) and ``AsyncOperations`` (under ``octet_host.aio.Host``): one
typed method per control line (``$defs.control_line``) but those the two classes write
by hand (:data:`HAND_WRITTEN`), its parameters the line's members and its return type
the operation's reply (``$defs.replies``) or call output (``$defs.call_outputs``). The
two differ only in ``def``/``async def`` and ``await``.

tests/test_package.py regenerates all three and fails when a checked-in module differs.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "docs", "serve-protocol.schema.json")
OUTPUT = os.path.join(HERE, "..", "octet_host", "_generated.py")
ERRORS = os.path.join(HERE, "..", "octet_host", "_error_codes.py")
OPERATIONS = os.path.join(HERE, "..", "octet_host", "_operations.py")

#: The operations each Host class writes by hand: ``start`` (binds the services),
#: ``reload`` (tells the service desk the API version) and ``shutdown`` (``close``).
HAND_WRITTEN = ("start", "reload", "shutdown")

#: Optional members a method takes positionally, after the required ones (the rest are
#: keyword-only): the argument a caller names least.
POSITIONAL = {
    "call": ("arguments",),
    "command": ("arguments",),
    "hook": ("payload",),
    "context": ("prompt",),
    "status_collect": ("surface",),
    "notify": ("params",),
    "message_delta": ("delta",),
}

#: The reply member a method returns rather than the reply's members: (member, its
#: annotation, the value when the reply lacks it).
RETURNS: Dict[str, Tuple[str, str, Any]] = {
    "status": ("extensions", "List[StatusEntry]", []),
    "stop": ("report", "Json", {}),
    "agent_event": ("sequence", "int", None),
}

#: The output lines other than ``event`` lines that the clients hand to ``events()``,
#: each with ``event`` set to its ``type``.
EVENT_LINES = ("trace", "confirmation_request", "input_request", "request_cancelled", "shutdown")

#: Operations whose line takes members beyond the schema's (``lifecycle`` flattens its
#: event's params beside ``event``): the name of the ``**`` parameter.
REST = {"lifecycle": "params"}


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("/", "_").split("_"))


#: Nested object schemas met while generating, by class name (emitted before use).
NESTED: Dict[str, List[str]] = {}


def py_type(schema: Dict[str, Any]) -> str:
    """The Python annotation of a (small) JSON Schema. An object schema with a
    ``title`` and ``properties`` (nested in a reply) is a TypedDict of its own."""
    if schema.get("type") == "object" and "title" in schema and "properties" in schema:
        name = camel(schema["title"])
        if name not in NESTED:
            NESTED[name] = []
            NESTED[name] = typed_dict(name, schema, f"``{schema['title']}``.")
        return name
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    if "enum" in schema:
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    if "anyOf" in schema:
        kinds = [py_type(s) for s in schema["anyOf"]]
        return union(kinds)
    t = schema.get("type")
    if isinstance(t, list):
        return union([py_type({**schema, "type": one}) for one in t])
    if t == "string":
        return "str"
    if t == "integer":
        return "int"
    if t == "number":
        return "float"
    if t == "boolean":
        return "bool"
    if t == "null":
        return "None"
    if t == "array":
        items = schema.get("items")
        return f"List[{py_type(items)}]" if items else "List[Any]"
    if t == "object":
        return "Dict[str, Any]"
    return "Any"


def union(kinds: List[str]) -> str:
    unique = list(dict.fromkeys(kinds))
    if "None" in unique:
        rest = [k for k in unique if k != "None"]
        inner = rest[0] if len(rest) == 1 else f"Union[{', '.join(rest)}]"
        return f"Optional[{inner}]"
    return unique[0] if len(unique) == 1 else f"Union[{', '.join(unique)}]"


def typed_dict(name: str, schema: Dict[str, Any], doc: str) -> List[str]:
    """A TypedDict for an object schema: the required members in a base class, the
    optional ones (``total=False``) in the class itself (Python 3.9 has no
    NotRequired)."""
    props: Dict[str, Any] = schema.get("properties", {})
    required = [p for p in props if p in schema.get("required", [])]
    optional = [p for p in props if p not in required]
    out: List[str] = []
    base = "TypedDict"
    if required and optional:
        base = f"_{name}Required"
        out.append(f"class {base}(TypedDict):")
        out += [f"    {p}: {py_type(props[p])}" for p in required]
        out += ["", ""]
    out.append(f"class {name}({base}{', total=False' if optional else ''}):")
    out.append(f'    """{doc}"""')
    members = optional if (required and optional) else (required or optional)
    if members:
        out.append("")
    out += [f"    {p}: {py_type(props[p])}" for p in members]
    return out + ["", ""]


def generate(schema: Dict[str, Any]) -> str:
    out: List[str] = [
        '"""Generated by python/tools/generate.py from docs/serve-protocol.schema.json.',
        "",
        "Do not edit: change the schema (or the method table it is held to) and run",
        "``python3 python/tools/generate.py``.",
        '"""',
        "",
        "# fmt: off",
        "from __future__ import annotations",
        "",
        "from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union",
        "",
        "from typing import Protocol",
        "",
        "from ._call import ServiceCall",
        "from .errors import Refusal",
        "",
        "",
    ]
    lines: List[Tuple[str, str]] = []
    for line in schema["oneOf"]:
        name = camel(line["title"]) + "Line"
        lines.append((line["title"], name))
        out += typed_dict(name, line, f"The ``{line['title']}`` output line.")
    out.append("#: Every line serve writes.")
    out.append(f"OutputLine = Union[{', '.join(n for _, n in lines)}]")
    out += ["", ""]
    for title in EVENT_LINES:
        name = camel(title) + "Event"
        out.append(f"class {name}({camel(title)}Line):")
        out.append(f'    """A ``{title}`` line as ``events()`` yields it, named by ``event``."""')
        out.append("")
        out.append(f"    event: Literal[{title!r}]")
        out += ["", ""]

    control = schema["$defs"]["control_line"]["oneOf"]
    ops = [c["properties"]["op"]["const"] for c in control]
    for c in control:
        name = camel(c["title"]) + "Control"
        desc = c.get("description", "").replace('"', "'")
        out += typed_dict(name, c, f"The ``{c['title']}`` control line: {desc}")
    out.append("#: Every operation serve accepts, in the schema's order.")
    out.append("OPS: Tuple[str, ...] = (")
    out += [f"    {op!r}," for op in ops]
    out += [")", "", ""]

    replies = schema["$defs"]["replies"]["properties"]
    outputs = schema["$defs"]["call_outputs"]["properties"]
    shapes: List[str] = []
    for op, reply in replies.items():
        desc = reply.get("description", f"The members of a successful ``{op}`` reply.")
        shapes += typed_dict(camel(op) + "Reply", {**reply, "title": None}, desc)
    for op, output in outputs.items():
        shapes += typed_dict(
            camel(output["title"]),
            {**output, "title": None},
            f"The output of a successful ``{op}`` result.",
        )
    for lines_of_nested in NESTED.values():
        out += lines_of_nested
    out += shapes

    kinds = schema["$defs"]["service_kinds"]["x-kinds"]
    table: List[str] = []
    classes: List[Tuple[str, str]] = []
    for kind in kinds:
        cls = camel(kind["kind"]) + "Service"
        classes.append((kind["kind"], cls))
        methods = kind["methods"]
        for m in methods:
            stem = camel(kind["kind"]) + camel(m["fn"])
            out += typed_dict(f"{stem}Params", m["params"], f"The params of ``{m['method']}``.")
            if m["result"].get("properties"):
                out += typed_dict(
                    f"{stem}Result", m["result"], f"The result of ``{m['method']}``."
                )
        out.append(f"class {cls}(Protocol):")
        out.append(f'    """``{kind["kind"]}``: {kind["description"]}')
        out.append("")
        out.append("    Bind an object with these methods, or a subclass, whose methods it")
        out.append("    does not define refuse as ``unsupported_feature``. Each method gets")
        out.append("    the validated params and the request's :class:`ServiceCall`, and")
        out.append("    returns the result or raises :class:`Refusal`.")
        out.append('    """')
        if not methods:
            out.append("")
            out.append("    # The runtime answers this kind's requests itself.")
        for m in methods:
            stem = camel(kind["kind"]) + camel(m["fn"])
            result = f"{stem}Result" if m["result"].get("properties") else "None"
            if m["result"].get("properties") and not m["result"].get("required"):
                # Every member optional (``{}`` is an answer): None answers ``{}``.
                result = f"Optional[{result}]"
            note = "a notification: its return value is not sent" if m["notification"] else ""
            out.append("")
            out.append(
                f"    def {m['fn']}(self, params: {stem}Params, call: ServiceCall) -> {result}:"
            )
            apis = ", ".join(m["apis"])
            suffix = f"; {note}" if note else ""
            out.append(f'        """``{m["method"]}`` (API {apis}){suffix}."""')
            out.append(
                f'        raise Refusal("unsupported_feature", "{m["method"]} is not served")'
            )
        out += ["", ""]
        rows = ", ".join(
            "("
            + ", ".join(
                [
                    repr(m["method"]),
                    repr(m["fn"]),
                    repr(tuple(m["apis"])),
                    repr(m["notification"]),
                    repr(m.get("marker")),
                ]
            )
            + ")"
            for m in methods
        )
        comma = "," if len(methods) == 1 else ""
        table.append(f"    {kind['kind']!r}: ({kind['broker']!r}, ({rows}{comma})),")
    out.append("#: A method row: (method, trait method, API versions, notification, marker).")
    out.append("MethodRow = Tuple[str, str, Tuple[str, ...], bool, Optional[str]]")
    out.append("")
    out.append("#: Every kind a ``start`` binds: (is a broker, its rows).")
    out.append("SERVICE_KINDS: Dict[str, Tuple[bool, Tuple[MethodRow, ...]]] = {")
    out += table
    out += ["}", ""]
    out.append("#: The Protocol class of each kind.")
    out.append("SERVICE_CLASSES: Dict[str, type] = {")
    out += [f"    {k!r}: {c}," for k, c in classes]
    out += ["}", "", ""]
    start = next(c for c in schema["$defs"]["control_line"]["oneOf"] if c["title"] == "start")
    protocols = dict(classes)
    out.append("class BoundServices(TypedDict, total=False):")
    out.append('    """What ``start`` binds, by name (the schema\'s ``start.services``): a')
    out.append("    kind's object, typed by its Protocol class, or None: the kind bound with no")
    out.append('    object, or a frontend feature without a service (``terminal_input``)."""')
    out.append("")
    for name in start["properties"]["services"]["items"]["enum"]:
        kind = protocols.get(name)
        out.append(f"    {name}: {f'Optional[{kind}]' if kind else 'None'}")
    out.append("")
    return "\n".join(out)


def error_codes(schema: Dict[str, Any]) -> str:
    """The module of serve's error codes and their exception classes."""
    out = [
        '"""Generated by python/tools/generate.py from docs/serve-protocol.schema.json.',
        "",
        "Do not edit: change the schema (``$defs.error_codes``) and run",
        "``python3 python/tools/generate.py``.",
        '"""',
        "",
        "from typing import Dict",
        "",
        "#: Each error code serve sends and the name of the exception class it raises.",
        "ERROR_CODES: Dict[str, str] = {",
    ]
    for row in schema["$defs"]["error_codes"]["x-codes"]:
        out.append(f"    {json.dumps(row['code'])}: {json.dumps(row['class'])},")
    out += ["}", ""]
    return "\n".join(out)


def param_type(schema: Dict[str, Any]) -> str:
    """The annotation of a method parameter for a control-line member: objects are
    ``Json``, arrays any ``Sequence``, ids ``Id``."""
    if schema.get("type") == "object":
        return "Json"
    if schema.get("type") == "array":
        items = schema.get("items")
        return f"Sequence[{py_type(items)}]" if items else "Sequence[Any]"
    if "anyOf" in schema and {s.get("type") for s in schema["anyOf"]} == {"string", "integer"}:
        return "Id"
    return py_type(schema)


def operation(line: Dict[str, Any], schema: Dict[str, Any], run: str) -> List[str]:
    """One method of a surface: ``run`` is ``""`` (synchronous) or ``"await "``."""
    op = line["title"]
    props: Dict[str, Any] = line.get("properties", {})
    outputs = schema["$defs"]["call_outputs"]["properties"]
    is_call = op in outputs
    # The client sets `op` and `id`, and a call's `call_id`.
    own = ("op", "id", "call_id") if is_call else ("op", "id")
    required = [p for p in line.get("required", []) if p not in own]
    optional = [p for p in props if p not in required and p not in own]
    positional = [p for p in optional if p in POSITIONAL.get(op, ())]
    keyword = [p for p in optional if p not in positional]
    params = ["self"]
    params += [f"{p}: {param_type(props[p])}" for p in required]
    params += [f"{p}: Optional[{param_type(props[p])}] = None" for p in positional]
    seconds = {p: p[: -len("_ms")] for p in keyword if p.endswith("_ms")}
    if keyword or is_call:
        params.append("*")
    for p in keyword:
        name = seconds.get(p, p)
        kind = "float" if p in seconds else param_type(props[p])
        params.append(f"{name}: Optional[{kind}] = None")
    if is_call:
        params.append("progress: Optional[Subscriber] = None")
    if op in REST:
        params.append(f"**{REST[op]}: Any")
    members = [p for p in required + positional + keyword if p != "extension" or not is_call]
    values = [
        f"{p}=_ops.milliseconds({seconds[p]})" if p in seconds else f"{p}={p}" for p in members
    ]
    if op in REST:
        values.append(f"**{REST[op]}")
    replies = schema["$defs"]["replies"]["properties"]
    if is_call:
        returns = camel(outputs[op]["title"])
        request = f"_ops.call({op!r}, extension, progress=progress, {', '.join(values)})"
        body = f"cast({returns}, {run}self._call({request}))"
    else:
        if op in RETURNS:
            member, returns, default = RETURNS[op]
            convert = f"_ops.member({member!r}, {default!r})"
        elif op in replies:
            returns, convert = camel(replies[op]["title"]) + "Reply", "_ops.members"
        else:
            returns, convert = "None", "_ops.nothing"
        request = f"_ops.reply({op!r}, {convert}, {', '.join(values)})".replace(", )", ")")
        body = f"{run}self._do({request})"
        if returns != "None":
            body = f"cast({returns}, {body})"
    define = "async def" if run else "def"
    out = [f"    {define} {op}({', '.join(params)}) -> {returns}:"]
    out.append(f'        """``{op}``: {line.get("description", "")}"""')
    out.append(f"        return {body}" if returns != "None" else f"        {body}")
    return out + [""]


def operations(schema: Dict[str, Any]) -> str:
    """The module of both method surfaces."""
    lines = [c for c in schema["$defs"]["control_line"]["oneOf"] if c["title"] not in HAND_WRITTEN]
    surfaces: List[str] = []
    for name, run, doc in (
        ("Operations", "", "octet_host.Host"),
        ("AsyncOperations", "await ", "octet_host.aio.Host"),
    ):
        define = "async def" if run else "def"
        surfaces += [
            "",
            f"class {name}:",
            f'    """The operations of :class:`{doc}` it does not write by hand."""',
            "",
            f'    {define} _do(self, request: "_ops.Request[T]") -> T:',
            '        """Sends ``request`` and waits for its answer."""',
            "        raise NotImplementedError",
            "",
            f'    {define} _call(self, request: "_ops.Request[Json]") -> Json:',
            '        """Sends the call ``request`` and waits for its output."""',
            "        raise NotImplementedError",
            "",
        ]
        for line in lines:
            surfaces += operation(line, schema, run)
    text = "\n".join(surfaces)
    defined = set(re.findall(r"^class (\w+)", generate(schema), re.M))
    used = sorted(n for n in set(re.findall(r"\b[A-Z]\w+\b", text)) if n in defined)
    out = [
        '"""Generated by python/tools/generate.py from docs/serve-protocol.schema.json.',
        "",
        "Do not edit: change the schema (or the generator's tables) and run",
        "``python3 python/tools/generate.py``.",
        '"""',
        "",
        "# fmt: off",
        "from __future__ import annotations",
        "",
        "from typing import Any, List, Optional, Sequence, TypeVar, cast",
        "",
        "from . import _ops",
        "from ._core import Subscriber",
        "from ._generated import (",
        *[f"    {n}," for n in used],
        ")",
        "from ._ops import Id, Json",
        "",
        'T = TypeVar("T")',
        "",
        text,
    ]
    return "\n".join(out).rstrip("\n") + "\n"


def write(text: str, output: str) -> None:
    if output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)


def main() -> None:
    schema_path = sys.argv[1] if len(sys.argv) > 1 else SCHEMA
    output = sys.argv[2] if len(sys.argv) > 2 else OUTPUT
    errors = sys.argv[3] if len(sys.argv) > 3 else (ERRORS if output != "-" else "")
    methods = sys.argv[4] if len(sys.argv) > 4 else (OPERATIONS if output != "-" else "")
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    write(generate(schema), output)
    if errors:
        write(error_codes(schema), errors)
    if methods:
        write(operations(schema), methods)


if __name__ == "__main__":
    main()
