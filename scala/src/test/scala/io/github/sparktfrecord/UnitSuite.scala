package io.github.sparktfrecord

import scala.concurrent.duration.Duration

import munit.FunSuite

/**
 * The unit tests' base: munit's `FunSuite` with a test timeout that bounds a hang, not a speed.
 * munit's default of 30 s failed the property suite (then 300 schemas compiled by Janino, about
 * 15 s idle) in CI, on two cores shared with the environments' pip installs.
 */
abstract class UnitSuite extends FunSuite {
  override val munitTimeout: Duration = Duration(10, "min")
}
