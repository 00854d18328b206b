package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.{TFRecordDataException, TFRecordError}

/**
 * Reads a nested schema: turns the flat row the [[ExampleDeserializer]] decoded (one column per
 * path-named feature, see [[FeaturePaths]]) into a row of `schema`, in one reused writer.
 *
 *  - a struct is null when none of its features is present;
 *  - an array of structs is null when none of its features is present, else as long as its
 *    lists (Example) or feature lists (SequenceExample), which must all be of one length: lists
 *    of unequal length fail, naming the column and the features. A feature that is absent
 *    leaves its field null in every element. In a SequenceExample a field that is not an array
 *    takes the one value of its step (none: null; more: an error). A concatenated list
 *    ([[FeaturePaths.Leaf.concatenated]]) holds `listLength` values per element, split back.
 *
 * Everything is decided when it is built: one [[Part]] per field, reading fixed-size values with
 * their getter and copying variable-size ones (strings, binaries, arrays) as bytes. One
 * assembler serves the records of one file, `path`, which its errors name with the byte offset
 * each record is given with.
 */
private[sparktfrecord] final class NestedRowAssembler(
    schema: StructType,
    leaves: IndexedSeq[FeaturePaths.Leaf],
    recordType: RecordType,
    path: String) {
  import NestedRowAssembler._

  private val sequence = recordType == RecordType.SequenceExample
  private val writer = new UnsafeRowWriter(schema.length, 64)
  /** The flat row's ordinal of each leaf, by its path of ordinals in `schema`. */
  private val flatOrdinals: Map[Seq[Int], Int] = leaves.indices.map { i =>
    val l = leaves(i)
    val ordinals = l.structs.map(_.ordinal) ++ Seq(l.ordinal) ++ l.inElement.map(_.ordinal) ++
      (if (l.inArrayOfStructs) Seq(l.elementOrdinal) else Nil)
    ordinals -> i
  }.toMap
  private val parts: Array[Part] = schema.fields.zipWithIndex.map { case (f, i) =>
    part(f, f.name, Seq(i), writer)
  }

  /** For error messages: the byte offset of the record being assembled, given with it. */
  private var recordOffset = 0L

  /**
   * The row of `schema` for the flat row `flat` of the record whose header starts at byte
   * `offset` of the file; overwritten by the next call.
   */
  def assemble(flat: UnsafeRow, offset: Long): UnsafeRow = {
    recordOffset = offset
    writer.reset()
    writer.zeroOutNullBytes()
    var i = 0
    while (i < parts.length) {
      parts(i).write(flat)
      i += 1
    }
    writer.getRow
  }

  /** The part writing `field`, Spark's `column` (for messages), at the ordinals `at`. */
  private def part(field: StructField, column: String, at: Seq[Int], target: UnsafeRowWriter)
      : Part = {
    val ordinal = at.last
    field.dataType match {
      case s: StructType =>
        val struct = new UnsafeRowWriter(target, s.length)
        val children = s.fields.zipWithIndex.map { case (f, i) =>
          part(f, column + "." + f.name, at :+ i, struct)
        }
        new StructPart(target, ordinal, struct, children, below(at))
      case ArrayType(e: StructType, _) =>
        new StructArrayPart(column, e, at, target)
      case t => new LeafPart(flatOrdinals(at), target, ordinal, Cell(t))
    }
  }

  /** The flat ordinals of the leaves at or below `at`. */
  private def below(at: Seq[Int]): Array[Int] =
    flatOrdinals.collect { case (p, i) if p.startsWith(at) => i }.toArray.sorted

  /** Writes one field of the row (or of a struct) from the flat row. */
  private abstract class Part {
    def write(flat: UnsafeRow): Unit
  }

  private final class LeafPart(from: Int, target: UnsafeRowWriter, ordinal: Int, cell: Cell)
    extends Part {
    def write(flat: UnsafeRow): Unit =
      if (flat.isNullAt(from)) cell.setNull(target, ordinal)
      else cell.copy(flat, from, target, ordinal)
  }

  private final class StructPart(
      target: UnsafeRowWriter,
      ordinal: Int,
      struct: UnsafeRowWriter,
      children: Array[Part],
      leaves: Array[Int]) extends Part {
    def write(flat: UnsafeRow): Unit =
      if (allNull(flat, leaves)) {
        target.setNullAt(ordinal)
      } else {
        val previousCursor = target.cursor()
        struct.resetRowWriter()
        var i = 0
        while (i < children.length) {
          children(i).write(flat)
          i += 1
        }
        target.setOffsetAndSizeFromPreviousCursor(ordinal, previousCursor)
      }
  }

  /**
   * An array of structs from its features' lists: element i holds value i of each. In a
   * SequenceExample each list is a feature list, and element i is built from step i.
   */
  private final class StructArrayPart(
      column: String,
      element: StructType,
      at: Seq[Int],
      target: UnsafeRowWriter) extends Part {
    private val ordinal = at.last
    private val arrayWriter = new UnsafeArrayWriter(target, 8)
    private val elementWriter = new UnsafeRowWriter(arrayWriter, element.length)
    /** The features of the element's leaves, in a fixed order, with a view of each list. */
    private val features: Array[Int] = below(at)
    /** Per feature: the values of one element (1, or the listLength of a concatenated list). */
    private val perElement: Array[Int] =
      features.map(f => if (leaves(f).concatenated) leaves(f).listLength else 1)
    private val lists: Array[UnsafeArrayData] = features.map(_ => new UnsafeArrayData)
    private val present = new Array[Boolean](features.length)
    private val steps: Array[UnsafeArrayData] = features.map(_ => new UnsafeArrayData)
    private val children: Array[ElementPart] =
      element.fields.zipWithIndex.map { case (f, i) => elementPart(f, at :+ i, elementWriter) }

    def write(flat: UnsafeRow): Unit = {
      var n = -1
      var k = 0
      while (k < features.length) {
        present(k) = !flat.isNullAt(features(k))
        if (present(k)) {
          pointAt(lists(k), flat, features(k))
          val values = lists(k).numElements()
          if (values % perElement(k) != 0) unequal(flat)
          val count = values / perElement(k)
          if (n < 0) n = count else if (count != n) unequal(flat)
        }
        k += 1
      }
      if (n < 0) {
        target.setNullAt(ordinal)
        return
      }
      val previousCursor = target.cursor()
      arrayWriter.initialize(n)
      var i = 0
      while (i < n) {
        val elementCursor = arrayWriter.cursor()
        elementWriter.resetRowWriter()
        var c = 0
        while (c < children.length) {
          children(c).write(i)
          c += 1
        }
        arrayWriter.setOffsetAndSizeFromPreviousCursor(i, elementCursor)
        i += 1
      }
      target.setOffsetAndSizeFromPreviousCursor(ordinal, previousCursor)
    }

    private def nonePresent(ks: Array[Int]): Boolean = {
      var j = 0
      while (j < ks.length) {
        if (present(ks(j))) return false
        j += 1
      }
      true
    }

    private def unequal(flat: UnsafeRow): Nothing = {
      val lengths = features.indices.map { k =>
        val name = leaves(features(k)).name
        if (flat.isNullAt(features(k))) s"'$name' absent"
        else {
          pointAt(lists(k), flat, features(k))
          val per = if (perElement(k) > 1) s" values, ${perElement(k)} per element" else ""
          s"'$name' ${lists(k).numElements()}$per"
        }
      }
      val what = if (sequence) "feature lists of unequal length (steps)"
      else "lists of unequal length"
      throw TFRecordDataException.mismatch(column,
        s"Column '$column' (array<struct>) is read from $what: ${lengths.mkString(", ")}",
        path, recordOffset)
    }

    private def elementPart(field: StructField, at: Seq[Int], target: UnsafeRowWriter)
        : ElementPart = field.dataType match {
      case s: StructType =>
        val struct = new UnsafeRowWriter(target, s.length)
        val children = s.fields.zipWithIndex.map { case (f, i) => elementPart(f, at :+ i, struct) }
        val mine = below(at).map(features.indexOf(_))
        val o = at.last
        new ElementPart {
          def write(i: Int): Unit =
            if (nonePresent(mine)) target.setNullAt(o)
            else {
              val previousCursor = target.cursor()
              struct.resetRowWriter()
              var c = 0
              while (c < children.length) {
                children(c).write(i)
                c += 1
              }
              target.setOffsetAndSizeFromPreviousCursor(o, previousCursor)
            }
        }
      case ArrayType(e, _) if leaves(flatOrdinals(at)).concatenated =>
        val k = features.indexOf(flatOrdinals(at))
        val slice = new SliceCell(e, target, leaves(features(k)).column)
        val length = perElement(k)
        val o = at.last
        new ElementPart {
          def write(i: Int): Unit =
            if (!present(k)) target.setNullAt(o) else slice.copy(lists(k), i * length, length, o)
        }
      case t =>
        val k = features.indexOf(flatOrdinals(at))
        val cell = Cell(t)
        val o = at.last
        val stepValue = sequence && !t.isInstanceOf[ArrayType]
        val leafName = leaves(features(k)).name
        new ElementPart {
          def write(i: Int): Unit =
            if (!present(k)) cell.setNull(target, o)
            else if (!stepValue) cell.copy(lists(k), i, target, o)
            else {
              // A step of a feature list holding the value of a field that is not an array.
              pointAt(steps(k), lists(k), i)
              steps(k).numElements() match {
                case 0 => cell.setNull(target, o)
                case 1 => cell.copy(steps(k), 0, target, o)
                case m => throw TFRecordDataException.mismatch(column,
                    s"Column '$column' field '${field.name}' (${t.simpleString}) holds one value " +
                      s"per step, but step $i of feature list '$leafName' holds $m",
                    path, recordOffset)
              }
            }
        }
    }
  }

  /** Writes one field of element i of an array of structs. */
  private abstract class ElementPart {
    def write(i: Int): Unit
  }
}

private[sparktfrecord] object NestedRowAssembler {

  /** Whether every ordinal in `ordinals` is null in `row`. */
  private def allNull(row: UnsafeRow, ordinals: Array[Int]): Boolean = {
    var i = 0
    while (i < ordinals.length) {
      if (!row.isNullAt(ordinals(i))) return false
      i += 1
    }
    true
  }

  /** Points `view` at the array in slot `ordinal` of an unsafe row or array. */
  private def pointAt(view: UnsafeArrayData, container: SpecializedGetters, ordinal: Int): Unit =
    container match {
      case r: UnsafeRow =>
        val slot = r.getLong(ordinal)
        view.pointTo(
          r.getBaseObject, UnsafeSlot.offset(r.getBaseOffset, slot), UnsafeSlot.size(slot))
      case a: UnsafeArrayData =>
        val slot = a.getLong(ordinal)
        view.pointTo(
          a.getBaseObject, UnsafeSlot.offset(a.getBaseOffset, slot), UnsafeSlot.size(slot))
    }

  /**
   * Writes `length` values of a list, from `start`, as an array into field `ordinal` of
   * `target`: an element's share of a concatenated list. Fixed-size values only.
   */
  private final class SliceCell(elementType: DataType, target: UnsafeRowWriter, column: String) {
    // Fixed-size values only, as the type table declares them.
    private val entry: TypeEntry = TypeTable.entry(elementType) match {
      case Some(e @ (_: Int64Entry | TypeTable.FloatTypeEntry | TypeTable.DoubleEntry)) => e
      case _ => throw TFRecordError.argument(TFRecordError.UnsupportedType,
          s"Column '$column' has elements of type ${elementType.simpleString}, which a list " +
            "split per element cannot hold: only numbers and booleans can.", "column" -> column)
    }
    private val writer = new UnsafeArrayWriter(target, entry.elementSize)

    def copy(list: UnsafeArrayData, start: Int, length: Int, ordinal: Int): Unit = {
      val previousCursor = target.cursor()
      writer.initialize(length)
      var j = 0
      while (j < length) {
        entry.copy(list, start + j, writer, j)
        j += 1
      }
      target.setOffsetAndSizeFromPreviousCursor(ordinal, previousCursor)
    }
  }

  /** Copies one value of a type from an unsafe row or array into a row writer's field. */
  private abstract class Cell {
    def copy(from: SpecializedGetters, i: Int, to: UnsafeRowWriter, ordinal: Int): Unit
    def setNull(to: UnsafeRowWriter, ordinal: Int): Unit = to.setNullAt(ordinal)
  }

  private object Cell {
    /** A type of the type table with values of a fixed size; else one copied as bytes. */
    def apply(dataType: DataType): Cell = TypeTable.entry(dataType) match {
      case Some(_: BytesEntry) | None => VariableSize // strings, binaries, arrays, vectors
      case Some(e) => new Cell {
          def copy(f: SpecializedGetters, i: Int, t: UnsafeRowWriter, o: Int): Unit =
            e.copy(f, i, t, o)
          override def setNull(t: UnsafeRowWriter, o: Int): Unit = e.setNull(t, o)
        }
    }
  }

  /** A value stored apart from its slot, moved as the bytes the slot points at. */
  private object VariableSize extends Cell {
    def copy(f: SpecializedGetters, i: Int, t: UnsafeRowWriter, o: Int): Unit = f match {
      case r: UnsafeRow => copyBytes(r.getBaseObject, r.getBaseOffset, r.getLong(i), t, o)
      case a: UnsafeArrayData => copyBytes(a.getBaseObject, a.getBaseOffset, a.getLong(i), t, o)
    }

    // The flat row lives in its writer's byte array: the bytes are copied from there.
    private def copyBytes(
        base: AnyRef,
        baseOffset: Long,
        slot: Long,
        t: UnsafeRowWriter,
        o: Int): Unit = {
      val at = UnsafeSlot.offset(baseOffset, slot) - Platform.BYTE_ARRAY_OFFSET
      t.write(o, base.asInstanceOf[Array[Byte]], at.toInt, UnsafeSlot.size(slot))
    }
  }
}
