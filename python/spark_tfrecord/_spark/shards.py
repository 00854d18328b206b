"""Balanced, shuffled shards: a DataFrame arranged so that partition ``s`` holds shard ``s``.

A write cannot move rows between tasks: rows get a dense ``index`` (``xxhash64(seed, row)`` or
input order) and go to partition ``index % N``, sorted by it (not ``orderBy``: its sampled bounds
differ per job). A seed's files are the same bytes from any partitioning of the same rows.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.types import DataType

#: Keys are counted in 2^12 buckets (their top 12 bits).
BUCKET_BITS = 12
#: ``monotonically_increasing_id``: the partition in the upper 31 bits, the position in 33.
ID_POSITION_BITS = 33
#: Spark's ``hash()`` and hash partitioning: Murmur3 x86 32-bit, seed 42.
SPARK_HASH_SEED = 42
#: The most shards a write takes (the ``numShards`` option's bound).
MAX_SHARDS = 99999


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def _murmur3_int(value: int, seed: int = SPARK_HASH_SEED) -> int:
    """Spark's ``hash()`` of an ``int`` column (``Murmur3_x86_32.hashInt``), as a signed int."""
    k1 = (value & 0xFFFFFFFF) * 0xCC9E2D51 & 0xFFFFFFFF
    k1 = _rotl32(k1, 15) * 0x1B873593 & 0xFFFFFFFF
    h1 = _rotl32((seed & 0xFFFFFFFF) ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF
    h1 ^= 4  # the input's length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


@functools.lru_cache(maxsize=16)
def routing_keys(num_shards: int) -> tuple[int, ...]:
    """For each shard ``s``, the smallest ``k >= 0`` with ``pmod(hash(k), num_shards) == s``."""
    keys: dict[int, int] = {}
    k = 0
    while len(keys) < num_shards:
        keys.setdefault(_murmur3_int(k) % num_shards, k)  # Python's % of a positive modulus: pmod
        k += 1
    return tuple(keys[s] for s in range(num_shards))


def _has_map(data_type: DataType) -> bool:
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, MapType):
        return True
    if isinstance(data_type, ArrayType):
        return _has_map(data_type.elementType)
    if isinstance(data_type, StructType):
        return any(_has_map(f.dataType) for f in data_type.fields)
    return False


def _free_name(taken: list[str], name: str) -> str:
    lower = {t.lower() for t in taken}
    while name.lower() in lower:
        name = "_" + name
    return name


def _long_array(values: list[int]) -> Column:
    """A literal ``array<bigint>``, sent as one SQL expression (one call, one plan node)."""
    from pyspark.sql import functions as F

    return F.expr("array(" + ",".join(f"{v}L" for v in values) + ")")


def _running_sums(counts: list[int]) -> list[int]:
    return list(itertools.accumulate(counts, initial=0))[:-1]


def arrange(
    data_frame: DataFrame | ConnectDataFrame, num_shards: int, shuffle_seed: int | None
) -> DataFrame | ConnectDataFrame:
    """``df`` in ``num_shards`` balanced, sorted partitions, ``s`` being shard ``s``; counts now."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if isinstance(num_shards, bool) or not isinstance(num_shards, int):
        raise TypeError(f"num_shards must be an int, not {type(num_shards).__name__}")
    if not 1 <= num_shards <= MAX_SHARDS:
        raise ValueError(f"num_shards must be from 1 to {MAX_SHARDS}, not {num_shards}")
    if shuffle_seed is not None and (
        isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, int)
    ):
        raise TypeError(f"shuffle_seed must be an int, not {type(shuffle_seed).__name__}")
    if shuffle_seed is not None and not -(2**63) <= shuffle_seed < 2**63:
        raise ValueError(f"shuffle_seed must fit in 64 bits (a bigint), not {shuffle_seed}")
    # Classic or Connect: the type stubs cannot tell which Column class `functions` builds.
    df: Any = data_frame
    schema = df.schema
    if _has_map(schema):
        # Spark's hashes refuse maps; let the tfrecord format refuse them with its own message.
        return data_frame
    names = schema.fieldNames()
    data = [df[f"`{n.replace('`', '``')}`"] for n in names]
    index_name, route_name = (_free_name(names, n) for n in ("_tfrecord_index", "_tfrecord_route"))

    if shuffle_seed is not None:
        seed = F.lit(shuffle_seed).cast("long")
        key = F.xxhash64(seed, *data)
        # A second hash orders different rows of equal keys independently of the input.
        tie = F.xxhash64(seed, F.lit("tie"), *data)
        half = 1 << (BUCKET_BITS - 1)
        bucket = F.shiftright(key, 64 - BUCKET_BITS) + half  # 0 .. 2^BUCKET_BITS - 1, in order
        key_name, tie_name, bucket_name = (_free_name(names, n) for n in ("_k", "_t", "_b"))
        counted = df.select(bucket.alias(bucket_name)).groupBy(bucket_name).count().collect()
        counts = [0] * (1 << BUCKET_BITS)
        for row in counted:
            counts[int(row[0])] = int(row[1])
        offsets = _long_array(_running_sums(counts))
        keyed = df.select(
            *data, key.alias(key_name), tie.alias(tie_name), bucket.alias(bucket_name)
        )
        rank = F.row_number().over(Window.partitionBy(bucket_name).orderBy(key_name, tie_name))
        numbered = keyed.withColumn(
            index_name, F.element_at(offsets, (F.col(bucket_name) + 1).cast("int")) + rank - 1
        ).drop(key_name, tie_name, bucket_name)
    else:
        id_name = _free_name(names, "_tfrecord_id")
        with_id = df.select(*data, F.monotonically_increasing_id().alias(id_name))
        partition = F.shiftright(F.col(id_name), ID_POSITION_BITS)
        position = F.col(id_name).bitwiseAND((1 << ID_POSITION_BITS) - 1)
        # Hashing every column keeps this job planned, hence partitioned, as the write is.
        counted = (
            with_id.groupBy(partition.alias("p"))
            .agg(F.count(F.lit(1)).alias("n"), F.max(F.xxhash64(*data)).alias("h"))
            .collect()
        )
        per_partition = {int(row["p"]): int(row["n"]) for row in counted}
        span = max(per_partition, default=-1) + 1
        counts = [per_partition.get(p, 0) for p in range(span)]
        offsets = _long_array(_running_sums(counts) or [0])
        numbered = with_id.withColumn(
            index_name, F.element_at(offsets, (partition + 1).cast("int")) + position
        ).drop(id_name)

    routes = _long_array(list(routing_keys(num_shards)))
    shard = F.pmod(F.col(index_name), F.lit(num_shards)).cast("int")
    route = F.element_at(routes, shard + 1).cast("int")
    arranged: DataFrame | ConnectDataFrame = (
        numbered.withColumn(route_name, route)
        .repartition(num_shards, route_name)
        .sortWithinPartitions(index_name)
        .drop(index_name, route_name)
    )
    return arranged
