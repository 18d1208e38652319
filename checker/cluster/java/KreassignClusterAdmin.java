import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.AlterPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeFeaturesOptions;
import org.apache.kafka.clients.admin.DescribeLogDirsOptions;
import org.apache.kafka.clients.admin.DescribeMetadataQuorumOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ElectLeadersOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * kreassign's window into a real cluster (checker/cluster/admin.py, docs/cluster.md): Kafka's own Admin client
 * answering JSON lines, one request on stdin, one reply on stdout ({"ok": true, "result": ...} or
 * {"ok": false, "error_class": ..., "error": ...}). Compiled by javac against each release's jars; it uses only
 * the Admin API every supported release has (3.9 .. 4.4), and reaches newer methods by reflection. Exits at the
 * end of its input.
 *
 * Arguments: bootstrap.servers, then optionally a Kafka client properties file (what Kafka's tools take as
 * --command-config: SASL, SSL): the helper's defaults, overridden by the file, with bootstrap.servers always the
 * first argument. A client that cannot be created answers every request with that error.
 */
public final class KreassignClusterAdmin {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int GRACE_MS = 2000;
    private static final String CREATE_FAILED = "the Admin client could not be created: ";
    private static String bootstrap;
    private static Properties userProps = new Properties();  // the properties file's, for the producer too
    private static KafkaProducer<byte[], byte[]> producer;  // made on the first "produce", closed at exit

    private KreassignClusterAdmin() {
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Admin admin = null;
        Throwable setupError = null;
        try {
            admin = Admin.create(adminProps(args));
        } catch (Exception e) {
            setupError = e;  // answered to every request: the caller learns why from its first one
        }
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                ObjectNode reply = JSON.createObjectNode();
                if (setupError != null) {
                    Throwable root = rootCause(setupError);
                    reply.put("ok", false);
                    reply.put("error_class", root.getClass().getSimpleName());
                    reply.put("error", CREATE_FAILED + (root.getMessage() != null ? root.getMessage()
                        : root.getClass().getSimpleName()));
                    reply.put("create_failed", true);
                } else {
                    try {
                        JsonNode request = JSON.readTree(line);
                        JsonNode result = handle(admin, request, request.path("timeout_ms").asInt(10000));
                        reply.put("ok", true);
                        reply.set("result", result);
                    } catch (ExecutionException e) {
                        fail(reply, e.getCause() != null ? e.getCause() : e);
                    } catch (Exception e) {
                        fail(reply, e);
                    }
                }
                out.println(JSON.writeValueAsString(reply));
                out.flush();
            }
        } finally {
            if (producer != null) {
                producer.close(java.time.Duration.ofSeconds(2));
            }
            if (admin != null) {
                admin.close(java.time.Duration.ofSeconds(2));
            }
        }
    }

    /** The helper's defaults, then the properties file's (args[1]), then bootstrap.servers = args[0]. */
    private static Properties adminProps(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kreassign-cluster-admin");
        // nodes come and go on purpose (kill, pause): notice it quickly rather than after the defaults' 30 s
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        props.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        props.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "5000");
        if (args.length > 1) {
            try (InputStream f = new FileInputStream(args[1])) {
                userProps.load(f);  // as Kafka's tools read --command-config (Utils.loadProps): ISO 8859-1
            }
            props.putAll(userProps);
        }
        // every request passes its own timeoutMs; this bounds any other. Kafka refuses a default set below
        // request.timeout.ms, which the file may have raised
        if (!userProps.containsKey(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG)) {
            try {
                int request = Integer.parseInt(props.getProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG).trim());
                props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(Math.max(30000, request)));
            } catch (NumberFormatException e) {
                // not a number: Kafka's own check names the setting
            }
        }
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return props;
    }

    /** The innermost cause that says something: Admin.create wraps the reason ("Failed to create new
     *  KafkaAdminClient"). */
    private static Throwable rootCause(Throwable e) {
        Throwable root = e;
        for (Throwable c = e.getCause(); c != null && c != root; c = c.getCause()) {
            if (c.getMessage() != null) {
                root = c;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return root;
    }

    private static void fail(ObjectNode reply, Throwable e) {
        reply.put("ok", false);
        reply.put("error_class", e.getClass().getSimpleName());
        reply.put("error", String.valueOf(e.getMessage()));
    }

    /** A future's value; Kafka's own deadline (timeoutMs, passed with the request) ends it first, with Kafka's
     *  TimeoutException naming the call; the grace only keeps a late one from waiting forever. */
    private static <T> T get(KafkaFuture<T> future, int timeoutMs) throws Exception {
        return future.get(timeoutMs + GRACE_MS, TimeUnit.MILLISECONDS);
    }

    private static JsonNode handle(Admin admin, JsonNode req, int t) throws Exception {
        String op = req.path("op").asText();
        switch (op) {
            case "describe_cluster":
                return describeCluster(admin, req.path("include_fenced").asBoolean(false), t);
            case "quorum":
                return quorum(admin, t);
            case "features":
                return features(admin, t);
            case "create_topic":
                return createTopic(admin, req, t);
            case "delete_topics":
                get(admin.deleteTopics(strings(req.path("names")), new DeleteTopicsOptions().timeoutMs(t)).all(), t);
                return JSON.nullNode();
            case "describe_topics":
                return describeTopics(admin, req, t);
            case "log_dirs":
                return logDirs(admin, req, t);
            case "alter_reassignments":
                return alterReassignments(admin, req, t);
            case "list_reassignments":
                return listReassignments(admin, t);
            case "elect_leaders":
                return electLeaders(admin, req, t);
            case "alter_configs":
                return alterConfigs(admin, req, t);
            case "describe_configs":
                return describeConfigs(admin, req, t);
            case "list_topics":
                return listTopics(admin, req, t);
            case "produce":
                return produce(req, t);
            case "znodes":  // zk mode: read znodes with ZooKeeper's own client
                return znodes(req, t);
            case "znode_delete":  // zk mode: delete one znode (e.g. /controller: every broker re-elects)
                return znodeDelete(req, t);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static ObjectNode node(Node n) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", n.id());
        o.put("host", n.host());
        o.put("port", n.port());
        o.put("rack", n.rack());  // null when the broker has no broker.rack
        return o;
    }

    /**
     * The brokers registered and unfenced; with includeFenced, the fenced ones too, each marked (KIP-1073:
     * DescribeClusterOptions.includeFencedBrokers and Node.isFenced, Kafka 4.0+, so by reflection).
     * "fenced_known" says whether fenced brokers are listed: not when the jars predate the option or the
     * cluster refuses it (DescribeCluster v2: Kafka 4.0 brokers).
     */
    private static JsonNode describeCluster(Admin admin, boolean includeFenced, int t) throws Exception {
        long deadline = System.currentTimeMillis() + t;
        if (includeFenced) {
            try {
                Method include = DescribeClusterOptions.class.getMethod("includeFencedBrokers", boolean.class);
                Method isFenced = Node.class.getMethod("isFenced");
                DescribeClusterOptions options = new DescribeClusterOptions().timeoutMs(t);
                include.invoke(options, true);
                return cluster(admin.describeCluster(options), t, isFenced);
            } catch (NoSuchMethodException e) {
                // jars older than 4.0: the plain request below
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnsupportedVersionException)) {
                    throw e;
                }
            }
        }
        int left = (int) Math.max(1000, deadline - System.currentTimeMillis());
        return cluster(admin.describeCluster(new DescribeClusterOptions().timeoutMs(left)), left, null);
    }

    private static JsonNode cluster(DescribeClusterResult r, int t, Method isFenced) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        List<Node> nodes = new ArrayList<>(get(r.nodes(), t));
        o.put("cluster_id", get(r.clusterId(), t));
        Node controller = get(r.controller(), t);
        if (controller == null || controller.isEmpty()) {
            o.putNull("controller");
        } else {
            o.put("controller", controller.id());
        }
        ArrayNode brokers = o.putArray("brokers");
        nodes.sort((a, b) -> Integer.compare(a.id(), b.id()));
        for (Node n : nodes) {
            ObjectNode b = node(n);
            if (isFenced != null) {
                b.put("fenced", (Boolean) isFenced.invoke(n));
            }
            brokers.add(b);
        }
        o.put("fenced_known", isFenced != null);
        return o;
    }

    private static ArrayNode replicas(Collection<QuorumInfo.ReplicaState> states) {
        ArrayNode a = JSON.createArrayNode();
        for (QuorumInfo.ReplicaState s : states) {
            ObjectNode o = a.addObject();
            o.put("id", s.replicaId());
            o.put("log_end_offset", s.logEndOffset());
            if (s.lastCaughtUpTimestamp().isPresent()) {
                o.put("last_caught_up_ms", s.lastCaughtUpTimestamp().getAsLong());
            }
        }
        return a;
    }

    private static JsonNode quorum(Admin admin, int t) throws Exception {
        QuorumInfo q = get(admin.describeMetadataQuorum(new DescribeMetadataQuorumOptions().timeoutMs(t)).quorumInfo(), t);
        ObjectNode o = JSON.createObjectNode();
        o.put("leader", q.leaderId());
        o.put("leader_epoch", q.leaderEpoch());
        o.put("high_watermark", q.highWatermark());
        o.set("voters", replicas(q.voters()));
        o.set("observers", replicas(q.observers()));
        return o;
    }

    private static JsonNode features(Admin admin, int t) throws Exception {
        FeatureMetadata f = get(admin.describeFeatures(new DescribeFeaturesOptions().timeoutMs(t)).featureMetadata(), t);
        ObjectNode o = JSON.createObjectNode();
        ObjectNode finalized = o.putObject("finalized");
        for (Map.Entry<String, FinalizedVersionRange> e : new TreeMap<>(f.finalizedFeatures()).entrySet()) {
            finalized.put(e.getKey(), e.getValue().maxVersionLevel());
        }
        // what the broker that answered supports (each broker its own; a rolling upgrade shows either)
        ObjectNode supported = o.putObject("supported");
        for (Map.Entry<String, SupportedVersionRange> e : new TreeMap<>(f.supportedFeatures()).entrySet()) {
            ObjectNode range = supported.putObject(e.getKey());
            range.put("min", e.getValue().minVersion());
            range.put("max", e.getValue().maxVersion());
        }
        return o;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    private static JsonNode createTopic(Admin admin, JsonNode req, int t) throws Exception {
        String name = req.path("name").asText();
        NewTopic topic;
        if (req.hasNonNull("assignment")) {
            Map<Integer, List<Integer>> assignment = new TreeMap<>();
            req.get("assignment").fields().forEachRemaining(e -> assignment.put(Integer.parseInt(e.getKey()), ints(e.getValue())));
            topic = new NewTopic(name, assignment);
        } else {
            topic = new NewTopic(name, req.path("partitions").asInt(1), (short) req.path("replication_factor").asInt(1));
        }
        if (req.hasNonNull("configs")) {
            Map<String, String> configs = new HashMap<>();
            req.get("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
            topic.configs(configs);
        }
        get(admin.createTopics(List.of(topic), new CreateTopicsOptions().timeoutMs(t)).all(), t);
        return JSON.nullNode();
    }

    private static ArrayNode ids(List<Node> nodes) {
        ArrayNode a = JSON.createArrayNode();
        if (nodes != null) {
            nodes.forEach(n -> a.add(n.id()));
        }
        return a;
    }

    private static JsonNode describeTopics(Admin admin, JsonNode req, int t) throws Exception {
        Map<String, TopicDescription> topics =
            get(admin.describeTopics(strings(req.path("names")), new DescribeTopicsOptions().timeoutMs(t)).allTopicNames(), t);
        ObjectNode o = JSON.createObjectNode();
        for (TopicDescription d : new TreeMap<>(topics).values()) {
            ObjectNode topic = o.putObject(d.name());
            topic.put("id", String.valueOf(d.topicId()));
            ArrayNode partitions = topic.putArray("partitions");
            for (TopicPartitionInfo p : d.partitions()) {
                ObjectNode po = partitions.addObject();
                po.put("partition", p.partition());
                if (p.leader() == null || p.leader().isEmpty()) {
                    po.putNull("leader");
                } else {
                    po.put("leader", p.leader().id());
                }
                po.set("replicas", ids(p.replicas()));
                po.set("isr", ids(p.isr()));
                po.set("elr", ids(p.elr()));
                po.set("last_known_elr", ids(p.lastKnownElr()));
            }
        }
        return o;
    }

    private static JsonNode logDirs(Admin admin, JsonNode req, int t) {
        List<Integer> brokers = ints(req.path("brokers"));
        Map<Integer, KafkaFuture<Map<String, LogDirDescription>>> futures =
            admin.describeLogDirs(brokers, new DescribeLogDirsOptions().timeoutMs(t)).descriptions();
        ObjectNode o = JSON.createObjectNode();
        for (int b : brokers) {
            ObjectNode bo = o.putObject(String.valueOf(b));
            try {
                ArrayNode replicas = bo.putArray("replicas");
                for (Map.Entry<String, LogDirDescription> dir : get(futures.get(b), t).entrySet()) {
                    for (Map.Entry<TopicPartition, ReplicaInfo> r : dir.getValue().replicaInfos().entrySet()) {
                        ObjectNode ro = replicas.addObject();
                        ro.put("topic", r.getKey().topic());
                        ro.put("partition", r.getKey().partition());
                        ro.put("size", r.getValue().size());
                        ro.put("future", r.getValue().isFuture());
                    }
                }
            } catch (Exception e) {
                Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                bo.remove("replicas");
                bo.put("error_class", cause.getClass().getSimpleName());
                bo.put("error", String.valueOf(cause.getMessage()));
            }
        }
        return o;
    }

    private static TopicPartition partition(JsonNode n) {
        return new TopicPartition(n.path("topic").asText(), n.path("partition").asInt());
    }

    private static JsonNode alterReassignments(Admin admin, JsonNode req, int t) {
        Map<TopicPartition, Optional<NewPartitionReassignment>> changes = new LinkedHashMap<>();
        for (JsonNode r : req.path("reassignments")) {
            JsonNode target = r.get("target");
            changes.put(partition(r), target == null || target.isNull() ? Optional.empty()
                : Optional.of(new NewPartitionReassignment(ints(target))));
        }
        Map<TopicPartition, KafkaFuture<Void>> results =
            admin.alterPartitionReassignments(changes, new AlterPartitionReassignmentsOptions().timeoutMs(t)).values();
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition tp : changes.keySet()) {
            ObjectNode o = out.addObject();
            o.put("topic", tp.topic());
            o.put("partition", tp.partition());
            try {
                get(results.get(tp), t);
                o.putNull("error_class");
            } catch (Exception e) {
                Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                o.put("error_class", cause.getClass().getSimpleName());
                o.put("error", String.valueOf(cause.getMessage()));
            }
        }
        return out;
    }

    private static JsonNode listReassignments(Admin admin, int t) throws Exception {
        Map<TopicPartition, PartitionReassignment> all =
            get(admin.listPartitionReassignments(new ListPartitionReassignmentsOptions().timeoutMs(t)).reassignments(), t);
        List<TopicPartition> keys = new ArrayList<>(all.keySet());
        keys.sort((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition())
            : a.topic().compareTo(b.topic()));
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition tp : keys) {
            PartitionReassignment r = all.get(tp);
            ObjectNode o = out.addObject();
            o.put("topic", tp.topic());
            o.put("partition", tp.partition());
            o.set("replicas", JSON.valueToTree(r.replicas()));
            o.set("adding", JSON.valueToTree(r.addingReplicas()));
            o.set("removing", JSON.valueToTree(r.removingReplicas()));
        }
        return out;
    }

    private static JsonNode electLeaders(Admin admin, JsonNode req, int t) throws Exception {
        ElectionType type = "unclean".equals(req.path("type").asText()) ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
        Set<TopicPartition> partitions = new HashSet<>();
        req.path("partitions").forEach(n -> partitions.add(partition(n)));
        Map<TopicPartition, Optional<Throwable>> results =
            get(admin.electLeaders(type, partitions, new ElectLeadersOptions().timeoutMs(t)).partitions(), t);
        ArrayNode out = JSON.createArrayNode();
        for (Map.Entry<TopicPartition, Optional<Throwable>> e : results.entrySet()) {
            ObjectNode o = out.addObject();
            o.put("topic", e.getKey().topic());
            o.put("partition", e.getKey().partition());
            if (e.getValue().isPresent()) {
                o.put("error_class", e.getValue().get().getClass().getSimpleName());
                o.put("error", String.valueOf(e.getValue().get().getMessage()));
            } else {
                o.putNull("error_class");
            }
        }
        return out;
    }

    /** Incremental config changes of one topic or broker: "set" {key: value} and "delete" [key]. */
    private static JsonNode alterConfigs(Admin admin, JsonNode req, int t) throws Exception {
        ConfigResource.Type type = "broker".equals(req.path("resource").asText())
            ? ConfigResource.Type.BROKER : ConfigResource.Type.TOPIC;
        ConfigResource resource = new ConfigResource(type, req.path("name").asText());
        List<AlterConfigOp> ops = new ArrayList<>();
        req.path("set").fields().forEachRemaining(e -> ops.add(
            new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue().asText()), AlterConfigOp.OpType.SET)));
        req.path("delete").forEach(k -> ops.add(
            new AlterConfigOp(new ConfigEntry(k.asText(), null), AlterConfigOp.OpType.DELETE)));
        get(admin.incrementalAlterConfigs(Map.of(resource, ops), new AlterConfigsOptions().timeoutMs(t)).all(), t);
        return JSON.nullNode();
    }

    /**
     * Configs of topics and brokers ("resources": [{"type": "topic"|"broker", "name"}]): with "keys", those keys
     * whatever their source (a topic's effective value from a broker default too); without, every entry not
     * at its default. A sensitive entry's value is null; any other null is left out. A resource that did not
     * answer gets {"error_class", "error"}.
     */
    private static JsonNode describeConfigs(Admin admin, JsonNode req, int t) {
        Set<String> keys = req.hasNonNull("keys") ? new HashSet<>(strings(req.get("keys"))) : null;
        List<ConfigResource> resources = new ArrayList<>();
        for (JsonNode r : req.path("resources")) {
            ConfigResource.Type type = "broker".equals(r.path("type").asText())
                ? ConfigResource.Type.BROKER : ConfigResource.Type.TOPIC;
            resources.add(new ConfigResource(type, r.path("name").asText()));
        }
        ObjectNode o = JSON.createObjectNode();
        ObjectNode topics = o.putObject("topic");
        ObjectNode brokers = o.putObject("broker");
        if (resources.isEmpty()) {
            return o;
        }
        Map<ConfigResource, KafkaFuture<Config>> futures =
            admin.describeConfigs(resources, new DescribeConfigsOptions().timeoutMs(t)).values();
        for (ConfigResource r : resources) {
            ObjectNode ro = (r.type() == ConfigResource.Type.BROKER ? brokers : topics).putObject(r.name());
            try {
                Map<String, ConfigEntry> entries = new TreeMap<>();
                get(futures.get(r), t).entries().forEach(e -> entries.put(e.name(), e));
                for (ConfigEntry e : entries.values()) {
                    boolean wanted = keys != null ? keys.contains(e.name())
                        : e.source() != ConfigEntry.ConfigSource.DEFAULT_CONFIG;
                    if (!wanted) {
                        continue;
                    }
                    if (e.isSensitive()) {
                        ro.putNull(e.name());  // there, but never shown (Kafka sends no value anyway)
                    } else if (e.value() != null) {
                        ro.put(e.name(), e.value());
                    }
                }
            } catch (Exception e) {
                Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                ro.removeAll();
                ro.put("error_class", cause.getClass().getSimpleName());
                ro.put("error", String.valueOf(cause.getMessage()));
            }
        }
        return o;
    }

    /** The topics' names, sorted; the internal ones (__consumer_offsets, ...) only with "internal". */
    private static JsonNode listTopics(Admin admin, JsonNode req, int t) throws Exception {
        ListTopicsOptions options = new ListTopicsOptions().listInternal(req.path("internal").asBoolean(false));
        Set<String> names = get(admin.listTopics(options.timeoutMs(t)).names(), t);
        ArrayNode out = JSON.createArrayNode();
        new java.util.TreeSet<>(names).forEach(out::add);
        return out;
    }

    /** Records of "bytes" bytes each into one partition, acknowledged by its leader (acks=1): the offsets. */
    private static JsonNode produce(JsonNode req, int t) throws Exception {
        if (producer == null) {
            Properties p = new Properties();
            p.putAll(userProps);  // the connection's security settings; the producer's own settings win
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "kreassign-cluster-producer");
            p.put(ProducerConfig.ACKS_CONFIG, "1");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");  // acks=1 and no retries' ordering needs
            p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
            producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        }
        String topic = req.path("topic").asText();
        int partition = req.path("partition").asInt();
        byte[] value = new byte[req.path("bytes").asInt(1024)];
        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < req.path("records").asInt(1); i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, partition, null, value)));
        }
        ArrayNode offsets = JSON.createArrayNode();
        for (java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata> f : sent) {
            offsets.add(f.get(t, TimeUnit.MILLISECONDS).offset());
        }
        return offsets;
    }

    // -- ZooKeeper mode: znodes read with ZooKeeper's own client (org.apache.zookeeper.ZooKeeper, in 3.9's broker
    //    lib), loaded by name because the helper is also compiled against 4.x's jars, which have no ZooKeeper.
    //    One short session per request: a cluster's ZooKeeper may be restarted between requests.

    private static Object zookeeper(String connect, int t) throws Exception {
        Class<?> client = Class.forName("org.apache.zookeeper.ZooKeeper");
        Class<?> watcher = Class.forName("org.apache.zookeeper.Watcher");
        Object quiet = java.lang.reflect.Proxy.newProxyInstance(watcher.getClassLoader(), new Class<?>[] {watcher},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "hashCode": return System.identityHashCode(proxy);
                    case "equals": return proxy == args[0];
                    case "toString": return "kreassign-znodes";
                    default: return null;  // session events: the calls below wait for their own answers
                }
            });
        return client.getConstructor(String.class, int.class, watcher).newInstance(connect, Math.max(t, 4000), quiet);
    }

    private static Object zkCall(Object zk, String name, Class<?>[] types, Object... args) throws Exception {
        try {
            return zk.getClass().getMethod(name, types).invoke(zk, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    /** {path: {"exists", "data" (UTF-8 text or null), "version", "children" (sorted)}} for each of "paths". */
    private static JsonNode znodes(JsonNode req, int t) throws Exception {
        Object zk = zookeeper(req.path("connect").asText(), t);
        try {
            Class<?> statClass = Class.forName("org.apache.zookeeper.data.Stat");
            ObjectNode o = JSON.createObjectNode();
            for (String path : strings(req.path("paths"))) {
                ObjectNode z = o.putObject(path);
                Object stat = statClass.getConstructor().newInstance();
                byte[] data;
                List<?> children;
                try {
                    data = (byte[]) zkCall(zk, "getData", new Class<?>[] {String.class, boolean.class, statClass},
                        path, false, stat);
                    children = (List<?>) zkCall(zk, "getChildren", new Class<?>[] {String.class, boolean.class},
                        path, false);
                } catch (Exception e) {
                    if (!"NoNodeException".equals(e.getClass().getSimpleName())) {
                        throw e;
                    }
                    z.put("exists", false);
                    continue;
                }
                z.put("exists", true);
                z.put("data", data == null ? null : new String(data, StandardCharsets.UTF_8));
                z.put("version", (Integer) statClass.getMethod("getVersion").invoke(stat));
                ArrayNode names = z.putArray("children");
                children.stream().map(String::valueOf).sorted().forEach(names::add);
            }
            return o;
        } finally {
            zkCall(zk, "close", new Class<?>[] {});
        }
    }

    private static JsonNode znodeDelete(JsonNode req, int t) throws Exception {
        Object zk = zookeeper(req.path("connect").asText(), t);
        try {
            zkCall(zk, "delete", new Class<?>[] {String.class, int.class}, req.path("path").asText(), -1);
            return JSON.nullNode();
        } finally {
            zkCall(zk, "close", new Class<?>[] {});
        }
    }
}
