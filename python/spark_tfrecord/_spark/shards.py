"""Balanced, shuffled shards: a DataFrame arranged so that partition ``s`` holds shard ``s``.

A ``FileFormat`` writes what each task is given; it cannot move rows between tasks. So the
helpers arrange the DataFrame before the write, with the DataFrame API only (no RDD, no py4j),
which a Spark Connect client sends as it is:

1. Every row gets a dense number ``index`` in ``0 .. T-1``:

   - with ``shuffle_seed=S``, in the order of ``key = xxhash64(S, every column)``. The rows are
     counted per bucket of keys (the key's top bits: a bucket holds a range of keys, so bucket
     order is key order) in a first small job (an aggregate; nothing is sorted), and numbered
     within their bucket by a window (``row_number`` over the bucket, ordered by the key and a
     second hash that breaks ties). Neither depends on how the input is partitioned or ordered:
     only on S and the rows. (Not Spark's ``orderBy``: its range partitioner samples each input
     partition with a seed made of the RDD's id, new in each job, so two jobs over the same data
     cut the key range differently, and per-partition counts from one job would not match the
     partitions of the next.)
   - without a seed, in the order the input gives: ``monotonically_increasing_id`` is the input
     partition (``id >> 33``) and the position in it (``id & (2^33 - 1)``); a first job counts
     the rows of each input partition, whose running sums are each partition's first number.

2. ``shard = index % N``, and ``repartition(N, route)``, with ``route`` for shard ``s`` an
   integer whose ``pmod(hash(route), N) == s``: Spark's hash partitioning is that expression
   (Murmur3, seed 42: :func:`_murmur3_int` computes it), so shard ``s`` is output partition ``s``
   and its file. A repartition with an explicit number of partitions is never coalesced by AQE.
3. ``sortWithinPartitions(index)``: a file's records, hence its bytes, in a fixed order.

Shards then differ by at most one record, and the files of a seed are the same bytes from any
partitioning of the same rows. What it needs: the input gives the same rows in both jobs (a
``rand()`` filter, a ``limit`` without an order or a nondeterministic UDF do not), and, without a
seed, the same partitions too (true of files, tables, ``range`` and the shuffles of a
deterministic plan; the first job uses every column, so that it is planned as the write is).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.types import DataType

#: Keys are counted in 2^12 buckets (their top 12 bits): a list of 4096 numbers the write's plan
#: carries, and buckets of T / 4096 rows each for the window to number.
BUCKET_BITS = 12
#: ``monotonically_increasing_id`` puts the partition in the upper 31 bits, the position in the
#: lower 33.
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
    """For each shard ``s``, the smallest integer ``k >= 0`` that Spark's hash partitioning into
    ``num_shards`` partitions sends to partition ``s`` (``pmod(hash(k), num_shards) == s``)."""
    keys: list[int | None] = [None] * num_shards
    missing, k = num_shards, 0
    while missing:
        s = _murmur3_int(k) % num_shards  # Python's % of a positive modulus is pmod
        if keys[s] is None:
            keys[s] = k
            missing -= 1
        k += 1
    return tuple(k for k in keys if k is not None)


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
    sums, total = [], 0
    for c in counts:
        sums.append(total)
        total += c
    return sums


def arrange(
    data_frame: DataFrame | ConnectDataFrame, num_shards: int, shuffle_seed: int | None
) -> DataFrame | ConnectDataFrame:
    """``df`` in ``num_shards`` partitions of sizes that differ by at most one, partition ``s``
    being shard ``s``, each sorted; shuffled by ``shuffle_seed`` when given (see the module's
    doc). Runs one small job (the counts) now; the rest runs with the write."""
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
    # Classic or Connect: `functions` builds the Column class of the session that imports it,
    # which the type stubs cannot tell.
    df: Any = data_frame
    schema = df.schema
    if _has_map(schema):
        # Spark's hashes refuse maps, and the tfrecord format refuses them with its own message
        # when the write is planned: let it say so.
        return data_frame
    names = schema.fieldNames()
    data = [df[f"`{n.replace('`', '``')}`"] for n in names]
    index_name = _free_name(names, "_tfrecord_index")
    route_name = _free_name(names, "_tfrecord_route")

    if shuffle_seed is not None:
        seed = F.lit(shuffle_seed).cast("long")
        key = F.xxhash64(seed, *data)
        # Two different rows with the same key would be numbered in an order that depends on
        # the input; a second 64-bit hash makes that a 2^-128 event. Rows equal in every
        # column are the same record, so their order does not matter.
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
        # The hash keeps every column in the counting job's plan: one that read no column could
        # be planned otherwise (a smaller join side broadcast, a smaller shuffle coalesced by
        # AQE) and give partitions that are not the write's.
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
