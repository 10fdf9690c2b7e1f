import java.io.File;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;

/**
 * Prints, for each Avro file given, a line "==AvroDump== PATH COUNT" and then every record, one line each
 * (Avro's JSON-like toString). Used by avrow's CLI tests as an independent reader.
 */
public class AvroDump {
    public static void main(String[] args) throws Exception {
        for (String path : args) {
            try (DataFileReader<Object> r = new DataFileReader<>(new File(path), new GenericDatumReader<Object>())) {
                long n = 0;
                StringBuilder sb = new StringBuilder();
                for (Object rec : r) {
                    sb.append(String.valueOf(rec)).append('\n');
                    n++;
                }
                System.out.print("==AvroDump== " + path + " " + n + "\n" + sb);
            }
        }
    }
}
