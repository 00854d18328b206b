"""The ``schema.pbtxt`` of TFX's SchemaGen from statistics, as TFDV's ``infer_schema`` infers it."""

from __future__ import annotations

import json
import re

from spark_tfrecord._format.datasets.statistics_proto import FLOAT, INT, STRUCT, Feature, decode

#: TFDV's ``infer_schema`` default: the most values a string domain is inferred with.
MAX_STRING_DOMAIN_SIZE = 100
_TRUE = {"TRUE", "true", "SET", "set", "1", ""}
_FALSE = {"FALSE", "false", "CLEAR", "clear", "0"}
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def _text(value: str) -> str:
    """A string as the text format quotes it."""
    return json.dumps(value, ensure_ascii=False)


def _value_count(low: int, high: int, indent: str) -> list[str]:
    """A ``value_count`` from ``low`` to ``high`` values (empty if some list is empty)."""
    lines = [f"{indent}value_count {{"]
    if low > 0:
        lines.append(f"{indent}  min: {low if low == high else 1}")
        if low == high:
            lines.append(f"{indent}  max: {high}")
    return [*lines, f"{indent}}}"]


def _shape(f: Feature) -> list[str]:
    """The feature's presence, and its shape or value count (per level if nested)."""
    c = f.common
    lines = ["  presence {"]
    if c.num_non_missing > 0 and c.num_missing == 0:
        lines.append("    min_fraction: 1.0")
    lines += [f"    min_count: {1 if c.num_non_missing >= 1 else 0}", "  }"]
    if c.num_non_missing <= 0:
        return lines
    if c.presence:
        levels = [_value_count(p.min_num_values, p.max_num_values, "    ") for p in c.presence]
        return [*lines, "  value_counts {", *[line for level in levels for line in level], "  }"]
    if f.type != STRUCT and c.num_missing == 0 and c.min_num_values == c.max_num_values > 0:
        return [*lines, "  shape {", "    dim {", f"      size: {c.min_num_values}", "    }", "  }"]
    if c.min_num_values > 0:
        lines += _value_count(c.min_num_values, c.max_num_values, "  ")
    return lines


def _feature(
    f: Feature, children: dict[tuple[str, ...], list[Feature]], max_string_domain_size: int
) -> tuple[list[str], list[str]]:
    """The feature's lines (a STRUCT's children in its ``struct_domain``), its string domains."""
    name = ".".join(f.path)
    domain, string_domains = _domain(f, name, max_string_domain_size)
    types = {INT: "INT", FLOAT: "FLOAT", STRUCT: "STRUCT"}
    lines = ["feature {", f"  name: {_text(f.path[-1])}", f"  type: {types.get(f.type, 'BYTES')}"]
    lines += [*domain, *_shape(f)]
    nested = children.get(tuple(f.path), [])
    if nested:
        lines.append("  struct_domain {")
        for child in nested:
            found, more = _feature(child, children, max_string_domain_size)
            lines += ["    " + line for line in found]
            string_domains += more
        lines.append("  }")
    return [*lines, "}"], string_domains


def _domain(f: Feature, name: str, max_string_domain_size: int) -> tuple[list[str], list[str]]:
    """The feature's domain lines, and the schema's string domain lines if it has one."""
    if f.type == INT:
        n = f.numeric
        flag = n is not None and n.min >= 0.0 and n.max == 1.0
        return (["  bool_domain {", "  }"] if flag else []), []
    if f.type == FLOAT or f.strings is None or f.strings.invalid_utf8_count > 0:
        return [], []
    # the string values its rank histogram names, sorted (as TFDV's map)
    values = sorted({label for label, _ in f.strings.rank}, key=lambda v: v.encode())
    if values and len(values) <= 2:
        true = [v for v in values if v in _TRUE]
        false = [v for v in values if v in _FALSE]
        if len(true) <= 1 and len(false) <= 1 and len(true) + len(false) == len(values):
            lines = ["  bool_domain {"]
            lines += [f"    true_value: {_text(v)}" for v in true]
            lines += [f"    false_value: {_text(v)}" for v in false]
            return [*lines, "  }"], []
    if values and all(_INTEGER.fullmatch(v) for v in values):
        return ["  int_domain {", "  }"], []
    if values and len(values) <= max_string_domain_size:
        domain = ["string_domain {", f"  name: {_text(name)}"]
        domain += [f"  value: {_text(v)}" for v in values] + ["}"]
        return [f"  domain: {_text(name)}"], domain
    return [], []


def infer_schema(statistics: bytes, *, max_string_domain_size: int = MAX_STRING_DOMAIN_SIZE) -> str:
    """The schema TFDV's ``infer_schema`` infers from ``statistics``, as the text SchemaGen writes.

    ``statistics``: a binary ``DatasetFeatureStatisticsList`` (:func:`statistics`'s or TFDV's);
    ``max_string_domain_size``: the most values a string domain is inferred with.

    >>> import spark_tfrecord
    >>> df = spark.createDataFrame([("a", 1.5), ("b", 2.5)], "s string, x double")
    >>> print(spark_tfrecord.infer_schema(spark_tfrecord.statistics(df)))
    feature {
      name: "s"
      type: BYTES
      domain: "s"
      presence {
        min_fraction: 1.0
        min_count: 1
      }
      shape {
        dim {
          size: 1
        }
      }
    }
    feature {
      name: "x"
      type: FLOAT
      presence {
        min_fraction: 1.0
        min_count: 1
      }
      shape {
        dim {
          size: 1
        }
      }
    }
    string_domain {
      name: "s"
      value: "a"
      value: "b"
    }
    <BLANKLINE>
    """
    lines: list[str] = []
    domains: list[str] = []
    for dataset in decode(statistics)[:1]:
        children: dict[tuple[str, ...], list[Feature]] = {}
        for f in dataset.features:
            if len(f.path) > 1:
                children.setdefault(tuple(f.path[:-1]), []).append(f)
        for f in dataset.features:
            if len(f.path) == 1:
                found, string_domains = _feature(f, children, max_string_domain_size)
                lines += found
                domains += string_domains
    return "\n".join(lines + domains) + "\n"
