// What test_spark_shell types into `spark-shell --jars <our jar>`, line by line, as a user would
// (the README's instructions). The output folder comes from the environment: TFRECORD_OUT.
val out = sys.env("TFRECORD_OUT")
val df = Seq((1L, "a", Seq(0.5f, 1.5f)), (2L, "b", Seq(2.5f))).toDF("id", "lang", "x")
df.write.format("tfrecord").partitionBy("lang").save(out)
val back = spark.read.format("tfrecord").load(out)
println("SCHEMA " + back.schema.simpleString)
back.orderBy("id").collect().foreach(r => println("ROW " + r.mkString("|")))
import io.github.sparktfrecord.TFDS
val folder = TFDS.write(df, out + "-tfds", "shell_ds", "train", numShards = 3)
println("TFDS " + folder + " " + TFDS.read(spark, folder, "train").count())
