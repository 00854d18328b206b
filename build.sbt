// One source tree (scala/src/main/scala) compiled three times: Spark 3.5 with Scala 2.12 and 2.13,
// and Spark 4.x with Scala 2.13. The few lines that differ live in scala-spark-3 / scala-spark-4.
// `ci/sbt package` builds all three jars; `ci/sbt publishLocal` publishes them for Scala users.
// `ci/sbt test` runs the Scala tests (scala/src/test/scala: unit suites below Spark, integration
// suites on a local SparkSession) on both Spark lines.

ThisBuild / organization := "io.github.sparktfrecord"
// The version is the Python package's: one number for the wheel and the jars inside it.
ThisBuild / version := {
  val init = IO.read(file("python/spark_tfrecord/_version.py"))
  """__version__ = "([^"]+)"""".r.findFirstMatchIn(init).map(_.group(1))
    .getOrElse(sys.error("no __version__ in python/spark_tfrecord/_version.py"))
}
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0"))

/** One jar: `spark-tfrecord-spark<line>_<scala binary>`, e.g. `spark-tfrecord-spark3.5_2.12`. */
def sparkJar(
    id: String,
    sparkLine: String,
    sparkVersion: String,
    scalaV: String,
    javaRelease: String) =
  Project(id, file(s"target/projects/$id"))
    .settings(
      name := s"spark-tfrecord-spark$sparkLine",
      moduleName := name.value,
      scalaVersion := scalaV,
      libraryDependencies += "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      Compile / unmanagedSourceDirectories := Seq(
        (LocalRootProject / baseDirectory).value / "scala/src/main/scala",
        (LocalRootProject / baseDirectory).value /
          s"scala/src/main/scala-spark-${sparkLine.take(1)}"
      ),
      Compile / unmanagedResourceDirectories := Seq(
        (LocalRootProject / baseDirectory).value / "scala/src/main/resources"
      ),
      Test / unmanagedSourceDirectories := Nil,
      scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", javaRelease),
      javacOptions ++= Seq("--release", javaRelease),
      // The jar carries nothing but our classes: Spark (and so Scala) is provided at run time.
      packageOptions += Package.ManifestAttributes(
        "Spark-Version" -> sparkLine, "Implementation-Version" -> version.value),
      Compile / packageDoc / publishArtifact := false,
      Compile / doc / sources := Nil
    )

/**
 * The unit tests of the codec, framing, reader, options and type mapping, below Spark: munit (in
 * the Test scope only, so the jar stays free of dependencies) and the provided Spark jars.
 */
def unitTests(project: Project) = project.settings(
  Test / unmanagedSourceDirectories := Seq(
    (LocalRootProject / baseDirectory).value / "scala/src/test/scala"),
  // log4j2.properties: the integration suites' SparkSessions log warnings only.
  Test / unmanagedResourceDirectories := Seq(
    (LocalRootProject / baseDirectory).value / "scala/src/test/resources"),
  libraryDependencies += "org.scalameta" %% "munit" % "1.0.0" % Test,
  // A JVM of their own, told where the checkout is (a test reads docs/options.md).
  Test / fork := true,
  Test / javaOptions ++= Seq(
    "-Xmx1g", s"-Dsparktfrecord.root=${(LocalRootProject / baseDirectory).value}",
    // The integration suites' SparkSession: Spark 3.5's block manager reaches into sun.nio.ch,
    // which Java 17 opens only when asked (Spark's launcher asks; a test JVM must too).
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED")
)

// CRC32C is java.util.zip.CRC32C (Java 9+), so the Spark 3.5 jars need Java 11 or newer.
lazy val spark35_212 = unitTests(sparkJar("spark35_212", "3.5", "3.5.0", "2.12.18", "11"))
lazy val spark35_213 = sparkJar("spark35_213", "3.5", "3.5.0", "2.13.8", "11")
lazy val spark4_213 = unitTests(sparkJar("spark4_213", "4", "4.0.0", "2.13.16", "17"))

lazy val stageJars = taskKey[Seq[File]]("Builds the jars and copies them into the Python package.")
lazy val writeTestClasspath = taskKey[File](
  "Writes Spark 3.5's Scala 2.13 class path to target/, for the test that runs that jar.")

lazy val root = (project in file("."))
  .aggregate(spark35_212, spark35_213, spark4_213)
  .settings(
    name := "spark-tfrecord",
    publish / skip := true,
    Compile / packageBin / publishArtifact := false,
    stageJars := {
      val jars = Seq(
        (spark35_212 / Compile / packageBin).value,
        (spark35_213 / Compile / packageBin).value,
        (spark4_213 / Compile / packageBin).value)
      val dir = baseDirectory.value / "python/spark_tfrecord/jars"
      IO.delete(IO.listFiles(dir).filter(_.getName.endsWith(".jar")))
      val staged = jars.map(jar => jar -> dir / jar.getName)
      IO.copy(staged, CopyOptions().withOverwrite(true).withPreserveLastModified(false))
      streams.value.log.info(s"staged ${staged.size} jars in $dir")
      staged.map(_._2)
    },
    // pyspark ships only Scala 2.12 builds of Spark 3.5: the test of the Scala 2.13 jar runs it
    // on the Spark jars this build compiles against.
    writeTestClasspath := {
      val jars = (spark35_213 / Compile / dependencyClasspath).value.files
      val out = baseDirectory.value / "target/spark3.5_2.13.classpath"
      IO.write(out, jars.mkString(java.io.File.pathSeparator))
      out
    },
    Compile / unmanagedSourceDirectories := Nil,
    Compile / unmanagedResourceDirectories := Nil,
    Test / unmanagedSourceDirectories := Nil
  )
