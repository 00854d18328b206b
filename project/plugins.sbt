// Formatting with scalafmt (.scalafmt.conf pins its version): `ci/sbt scalafmtAll scalafmtSbt`
// formats, ci/test checks. The plugin and the formatter come from Maven Central, like every other
// jar of the build. 2.5.x is the newest line that runs on sbt 1.11 (2.6 needs sbt 1.12.9).
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
