// Kafka's own mirror-client answers, printed as one JSON object, for interoperability tests.
//
// Run with Java 17's source launcher on the Kafka Maven classpath (it holds connect-mirror-client):
//   java -cp <classpath> Harness.java <target bootstrap> <remote cluster alias> <group> [<group> ...]
// Prints {"remoteTopics": [...], "checkpointTopics": [...], "upstreamClusters": [...],
//         "replicationHops": n, "translateOffsets": {group: {"topic-partition": offset}}}
// where translateOffsets is RemoteClusterUtils.translateOffsets(props, alias, group, 30 s) for each group.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class Harness {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        String alias = args[1];
        StringBuilder out = new StringBuilder("{");
        try (MirrorClient client = new MirrorClient(props)) {
            out.append("\"remoteTopics\": ").append(strings(client.remoteTopics())).append(", ");
            out.append("\"checkpointTopics\": ").append(strings(client.checkpointTopics())).append(", ");
            out.append("\"upstreamClusters\": ").append(strings(client.upstreamClusters())).append(", ");
            out.append("\"replicationHops\": ").append(client.replicationHops(alias)).append(", ");
        }
        out.append("\"translateOffsets\": {");
        List<String> groups = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                RemoteClusterUtils.translateOffsets(props, alias, args[i], Duration.ofSeconds(30));
            Map<String, Long> sorted = new TreeMap<>();
            offsets.forEach((tp, om) -> sorted.put(tp.topic() + "-" + tp.partition(), om.offset()));
            List<String> entries = new ArrayList<>();
            sorted.forEach((tp, offset) -> entries.add(quoted(tp) + ": " + offset));
            groups.add(quoted(args[i]) + ": {" + String.join(", ", entries) + "}");
        }
        out.append(String.join(", ", groups)).append("}}");
        System.out.println(out);
    }

    private static String strings(Collection<String> values) {
        List<String> quoted = new ArrayList<>();
        for (String value : new TreeSet<>(values)) {
            quoted.add(quoted(value));
        }
        return "[" + String.join(", ", quoted) + "]";
    }

    private static String quoted(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
