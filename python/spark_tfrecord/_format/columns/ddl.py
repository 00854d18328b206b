"""Spark's DDL schema strings parsed in plain Python (PySpark's own parser needs the JVM).

>>> parse_ddl("id BIGINT NOT NULL, `my x` array<float> COMMENT 'pixels'")["fields"][1]
{'name': 'my x', 'type': {'type': 'array', 'elementType': 'float', 'containsNull': True}, \
'nullable': True, 'metadata': {'comment': 'pixels'}}
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

#: A primitive type's JSON name by its DDL names: the JSON name itself, and the aliases below.
_JSON_NAMES = ("boolean", "byte", "short", "integer", "long", "float", "double", "string", "binary")
_PRIMITIVES = {
    **{t: t for t in (*_JSON_NAMES, "date", "timestamp", "timestamp_ntz")},
    "tinyint": "byte",
    "smallint": "short",
    "int": "integer",
    "bigint": "long",
    "real": "float",
    "timestamp_ltz": "timestamp",
}
_DECIMALS = ("decimal", "dec", "numeric")
_CHARS = ("char", "character", "varchar")

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<quoted>`(?:[^`]|``)*`)"
    r"|(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<word>[A-Za-z0-9_]+)"
    r"|(?P<punct>[<>(),:])"
    r")"
)


class _Parser:
    def __init__(self, ddl: str) -> None:
        self.ddl = ddl
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        pos = 0
        while pos < len(ddl):
            if ddl[pos:].strip() == "":
                break
            m = _TOKEN.match(ddl, pos)
            if m is None or m.lastgroup is None:
                start = len(ddl) - len(ddl[pos:].lstrip())
                self.fail(f"unexpected {ddl[start]!r}", start)
            kind = m.lastgroup
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def fail(self, what: str, position: int | None = None) -> NoReturn:
        if position is None:
            position = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.ddl)
        raise ValueError(
            f"Cannot parse the schema {self.ddl!r}: {what} at position {position}. A schema is "
            "Spark's DDL: 'name type [NOT NULL] [COMMENT ...], ...', for example "
            "'id long, x array<float>'."
        )

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def accept(self, text: str, kind: str = "punct") -> bool:
        """Consumes the next token if it is ``text`` (a word: in any case)."""
        token = self.peek()
        if token is not None and token[0] == kind and token[1].lower() == text:
            self.i += 1
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.accept(char):
            self.fail(f"expected {char!r}")

    def take(self, what: str, *kinds: str) -> tuple[str, str]:
        """The next token's kind and text if it is of one of ``kinds``; else fails."""
        token = self.peek()
        if token is None or token[0] not in kinds:
            self.fail(f"expected {what}")
        self.i += 1
        return token[0], token[1]

    def name(self) -> str:
        kind, text = self.take("a column name", "word", "quoted")
        return text[1:-1].replace("``", "`") if kind == "quoted" else text

    def integer(self) -> int:
        token = self.peek()
        if token is None or token[0] != "word" or not token[1].isdigit():
            self.fail("expected a number")
        self.i += 1
        return int(token[1])

    def string(self) -> str:
        return re.sub(r"\\(.)", r"\1", self.take("a quoted string", "string")[1][1:-1])

    def data_type(self) -> Any:
        text = self.take("a type", "word")[1]
        word = text.lower()
        if word in _PRIMITIVES:
            if word == "string" and self.accept("collate", "word"):
                self.name()  # a collation orders strings; their values are strings
            return _PRIMITIVES[word]
        if word == "time":  # Spark 4.1's TIME(p): nanoseconds since midnight
            precision = 6
            if self.accept("("):
                precision = self.integer()
                self.expect(")")
            return f"time({precision})"
        if word in _DECIMALS:
            precision, scale = 10, 0
            if self.accept("("):
                precision = self.integer()
                if self.accept(","):
                    scale = self.integer()
                self.expect(")")
            return f"decimal({precision},{scale})"
        if word in _CHARS:  # Spark keeps them as strings
            if self.accept("("):
                self.integer()
                self.expect(")")
            return "string"
        if word == "array":
            self.expect("<")
            element = self.data_type()
            self.expect(">")
            return {"type": "array", "elementType": element, "containsNull": True}
        if word == "map":
            self.expect("<")
            key = self.data_type()
            self.expect(",")
            value = self.data_type()
            self.expect(">")
            return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}
        if word == "struct":
            self.expect("<")
            fields = []
            if not self.accept(">"):
                fields = self.fields()
                self.expect(">")
            return {"type": "struct", "fields": fields}
        self.i -= 1
        self.fail(f"unknown type {text!r}")

    def field(self) -> dict[str, Any]:
        name = self.name()
        self.accept(":")
        data_type = self.data_type()
        nullable = True
        metadata: dict[str, Any] = {}
        while True:
            if self.accept("not", "word"):
                if not self.accept("null", "word"):
                    self.fail("expected NULL after NOT")
                nullable = False
            elif self.accept("comment", "word"):
                metadata["comment"] = self.string()
            else:
                break
        return {"name": name, "type": data_type, "nullable": nullable, "metadata": metadata}

    def fields(self) -> list[dict[str, Any]]:
        fields = [self.field()]
        while self.accept(","):
            fields.append(self.field())
        return fields

    def columns(self) -> dict[str, Any]:
        fields = self.fields()
        if self.peek() is not None:
            self.fail("expected ',' or the end")
        return {"type": "struct", "fields": fields}


def parse_ddl(ddl: str) -> dict[str, Any]:
    """The Spark JSON of schema ``ddl`` (``a T, b: T`` or ``struct<...>``); ValueError if bad.

    >>> [f["name"] for f in parse_ddl("struct<a: int, b: map<string, bigint>>")["fields"]]
    ['a', 'b']
    """
    try:
        return _Parser(ddl).columns()
    except ValueError as column_error:
        whole = _Parser(ddl)
        try:
            data_type = whole.data_type()
        except ValueError:
            raise column_error from None
        if isinstance(data_type, dict) and data_type["type"] == "struct" and whole.peek() is None:
            return data_type
        raise column_error from None


#: Spark's SQL names of the JSON type names that differ from their upper case.
_SQL_NAMES = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT"}
_PLAIN_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def to_ddl(schema: dict[str, Any]) -> str:
    """The DDL of a Spark JSON schema as Scala's ``StructType.toDDL`` writes it, without a JVM.

    >>> to_ddl(parse_ddl("id bigint not null, `a b` struct<x: array<float>>"))
    'id BIGINT NOT NULL,`a b` STRUCT<x: ARRAY<FLOAT>>'
    """
    return ",".join(_field_sql(f, " ") for f in schema["fields"])


def _field_sql(f: dict[str, Any], separator: str) -> str:
    name = f["name"]
    if not _PLAIN_NAME.fullmatch(name):
        name = "`" + name.replace("`", "``") + "`"
    collations = (f.get("metadata") or {}).get("__COLLATIONS") or {}
    text = f"{name}{separator}{_type_sql(f['type'], f['name'], collations)}"
    if not f.get("nullable", True):
        text += " NOT NULL"
    comment = (f.get("metadata") or {}).get("comment")
    if comment is not None:
        text += " COMMENT '" + str(comment).replace("\\", "\\\\").replace("'", "\\'") + "'"
    return text


def _type_sql(t: Any, path: str = "", collations: Any = None) -> str:
    """``t``'s SQL; ``collations``: the field's ``__COLLATIONS`` metadata (by path: ``m.key``)."""
    if isinstance(t, str):
        collation = str((collations or {}).get(path, "")).split(".", 1)[-1]  # spark.UTF8_LCASE
        if t == "string" and collation:
            return f"STRING COLLATE {collation}"
        return _SQL_NAMES.get(t, t.upper())
    kind = t["type"]
    if kind == "array":
        return f"ARRAY<{_type_sql(t['elementType'], path + '.element', collations)}>"
    if kind == "map":
        key = _type_sql(t["keyType"], path + ".key", collations)
        return f"MAP<{key}, {_type_sql(t['valueType'], path + '.value', collations)}>"
    if kind == "struct":
        return "STRUCT<" + ", ".join(_field_sql(f, ": ") for f in t["fields"]) + ">"
    if kind == "udt":  # a user-defined type's SQL is its storage type's (UserDefinedType.sql)
        return _type_sql(t["sqlType"])
    raise ValueError(f"no DDL form for the type {t}")
