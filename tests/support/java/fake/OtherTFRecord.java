package fake;

/**
 * Another data source that calls itself tfrecord, as linkedin's jar does:
 * test_errors_troubleshooting compiles it into a jar of its own, to cause "Multiple sources found
 * for tfrecord".
 */
public class OtherTFRecord implements org.apache.spark.sql.sources.DataSourceRegister {
  public String shortName() { return "tfrecord"; }
}
