/*
 * kreassign's adapter for Apache Kafka's own KRaft controller (issue 12, docs/kafka.md).
 *
 * Speaks the JSON-lines protocol of docs/adapters.md on stdin/stdout: `reset` puts Kafka's
 * ReplicationControlManager / ClusterControlManager into a kreassign state (by replaying
 * RegisterBrokerRecord, TopicRecord, PartitionRecord and ConfigRecord, as a controller
 * loading a snapshot does), `apply` drives one action through the entry point a real
 * cluster would use (AlterPartitionReassignments, AlterPartition from the leader, a broker
 * session expiring, a broker heartbeat, ElectLeaders, CreatePartitions, DeleteTopics, ...), replays the records the
 * controller produced, and answers with the state read back from the managers.
 *
 * This file is the same for every supported release (3.9 .. 4.4). Whatever differs between
 * releases (the managers' builders, registerBroker, heartbeats and the fencing of stale
 * brokers, the ELR feature, ...) goes through the one class KafkaRelease, which the build
 * generates as `final class KafkaRelease extends KafkaReleaseX_Y` (layers/vX_Y/ holds the class
 * KafkaReleaseX_Y, and KafkaReleaseX_Y extends the older layer it builds on, if any); a class
 * that a release moved to another package is named only in a layer file of its own
 * (RecordBatches: the record-batch classes, which this file reads through `var`).
 *
 * Declared in org.apache.kafka.controller because the entry points are package-private.
 * stdout carries the protocol only; Kafka's own log goes nowhere (no SLF4J provider) or to
 * stderr.
 *
 * Extensions of the protocol (all optional, the plain protocol works unchanged):
 *  - an `apply` request may carry "state" (and "profile"): reset to it first (one round trip);
 *  - an `apply` request with "records": true answers the step's metadata records as
 *    kafka-dump-log.sh --cluster-metadata-decoder prints their payload;
 *  - {"op": "version"} answers Kafka's version, commit, the layer, the metadata.version in use,
 *    the metadata.versions the release accepts and what it says about ELR;
 *  - a state's topic may carry "min_insync_replicas" (a ConfigRecord; read back only then), and
 *    with --elr a partition carries "elr" and "last_known_elr" (PartitionRecord's
 *    eligibleLeaderReplicas / lastKnownElr; read back as PartitionRegistration's elr / lastKnownElr).
 *
 * Arguments: --metadata-version V (default: the release's latest production level),
 * --elr (eligible leader replicas, KIP-966: eligible.leader.replicas.version 1 in the bootstrap),
 * --zk-migration (ZooKeeper-migration mode, 3.9 only), --bug wrong-partition (a planted bug for the
 * tests: PartitionChangeRecords of an apply are replayed into the next partition of the topic).
 * An argument the release cannot honour exits with code 2 and one line on stderr.
 */
package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.metadata.UnregisterBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.common.serialization.RecordSerde;
import org.apache.kafka.server.config.ConfigSynonym;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

public final class KreassignAdapter {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    static final String UNCLEAN = "unclean.leader.election.enable";
    static final String MIN_ISR = "min.insync.replicas";
    static final long SESSION_TIMEOUT_MS = 9000;

    /**
     * Kafka's version and commit, read from kafka/kafka-version.properties as AppInfoParser reads them (AppInfoParser
     * moved to common.utils.internals in 4.4, and its logger would print SLF4J's no-provider warning before a
     * one-line argument error).
     */
    static final String KAFKA_VERSION;
    static final String KAFKA_COMMIT;

    static {
        Properties props = new Properties();
        try (InputStream in = ApiKeys.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) props.load(in);
        } catch (IOException e) {
            // as AppInfoParser: "unknown"
        }
        KAFKA_VERSION = props.getProperty("version", "unknown").trim();
        KAFKA_COMMIT = props.getProperty("commitId", "unknown").trim();
    }

    /**
     * Kafka's test schema (FakeKafkaConfigSchema): the two topic configs the controller reads. Built on first use
     * (ConfigSynonym's logger would print SLF4J's no-provider warning before a one-line argument error).
     */
    static KafkaConfigSchema schema() {
        return Schema.INSTANCE;
    }

    private static final class Schema {
        static final KafkaConfigSchema INSTANCE;

        static {
            Map<ConfigResource.Type, ConfigDef> configs = new HashMap<>();
            for (ConfigResource.Type type : new ConfigResource.Type[] {ConfigResource.Type.BROKER, ConfigResource.Type.TOPIC}) {
                configs.put(type, new ConfigDef()
                    .define(UNCLEAN, ConfigDef.Type.BOOLEAN, "false", ConfigDef.Importance.HIGH, "")
                    .define(MIN_ISR, ConfigDef.Type.INT, "1", ConfigDef.Importance.HIGH, ""));
            }
            Map<String, List<ConfigSynonym>> synonyms = new HashMap<>();
            synonyms.put(UNCLEAN, Collections.singletonList(new ConfigSynonym(UNCLEAN)));
            synonyms.put(MIN_ISR, Collections.singletonList(new ConfigSynonym(MIN_ISR)));
            INSTANCE = new KafkaConfigSchema(configs, synonyms);
        }
    }

    /** A clock the adapter moves by hand (session expiry). */
    static final class ManualTime implements Time {
        long nanos = 1_700_000_000_000_000_000L; // 2023-11-14T22:13:20Z, as batch timestamps
        public long milliseconds() { return nanos / 1_000_000L; }
        public long nanoseconds() { return nanos; }
        public void sleep(long ms) { nanos += ms * 1_000_000L; }
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("waitObject");
        }
    }

    /**
     * One controller: the managers (sharing one SnapshotRegistry, wired by the release's layer as its
     * QuorumController wires them), its clock, and the log replayed into them.
     */
    static final class Controller {
        final ManualTime time;
        final ConfigurationControlManager config;
        final FeatureControlManager features;
        final ClusterControlManager cluster;
        final ReplicationControlManager replication;
        final List<ApiMessageAndVersion> log = new ArrayList<>();
        long offset = 0;

        Controller(ManualTime time, ConfigurationControlManager config, FeatureControlManager features,
                   ClusterControlManager cluster, ReplicationControlManager replication) {
            this.time = time;
            this.config = config;
            this.features = features;
            this.cluster = cluster;
            this.replication = replication;
        }

        /** Dispatch one record as QuorumController.replay does. */
        void replay(ApiMessageAndVersion record) {
            ApiMessage m = record.message();
            long off = offset++;
            log.add(record);
            switch (MetadataRecordType.fromId(m.apiKey())) {
                case REGISTER_BROKER_RECORD: cluster.replay((RegisterBrokerRecord) m, off); break;
                case UNREGISTER_BROKER_RECORD: cluster.replay((UnregisterBrokerRecord) m); break;
                case FENCE_BROKER_RECORD: cluster.replay((FenceBrokerRecord) m); break;
                case UNFENCE_BROKER_RECORD: cluster.replay((UnfenceBrokerRecord) m); break;
                case BROKER_REGISTRATION_CHANGE_RECORD: cluster.replay((BrokerRegistrationChangeRecord) m); break;
                case TOPIC_RECORD: replication.replay((TopicRecord) m); break;
                case PARTITION_RECORD: replication.replay((PartitionRecord) m); break;
                case PARTITION_CHANGE_RECORD: replication.replay((PartitionChangeRecord) m); break;
                case REMOVE_TOPIC_RECORD: replication.replay((RemoveTopicRecord) m); break;
                case CONFIG_RECORD: config.replay((ConfigRecord) m); break;
                case FEATURE_LEVEL_RECORD: features.replay((FeatureLevelRecord) m); break;
                default: throw new IllegalStateException("unexpected record " + m);
            }
        }
    }

    final MetadataVersion mv;
    final boolean zkMigration;
    final boolean elr; // eligible leader replicas (KIP-966) on: the bootstrap enables eligible.leader.replicas.version
    final String bug;
    Controller ctl;
    long restarts = 0;
    JsonNode current; // the state of the last reset (its topic order, broker list and logs)
    // the metadata log since the last reset, as the record batches the controller would have written
    final List<List<ApiMessageAndVersion>> batches = new ArrayList<>();
    final List<Long> batchTimes = new ArrayList<>();

    KreassignAdapter(MetadataVersion mv, boolean zkMigration, boolean elr, String bug) {
        this.mv = mv;
        this.zkMigration = zkMigration;
        this.elr = elr;
        this.bug = bug;
    }

    /** A controller with empty managers; it becomes active once the log it loads is replayed (activate()). */
    Controller newController() {
        return KafkaRelease.newController(new ManualTime(), mv, zkMigration);
    }

    // -- ids ----------------------------------------------------------------------------------------

    static long brokerEpoch(int id) { return 100L + id; }

    /** The broker's epoch as registered now (a restart gives it a new one); -1 if it is not registered. */
    long currentEpoch(int id) {
        org.apache.kafka.metadata.BrokerRegistration reg = ctl.cluster.registration(id);
        return reg == null ? -1L : reg.epoch();
    }

    static Uuid dirOf(int id) { return new Uuid(0x6B72656173736967L, 0x1000L + id); }           // "kreassig"

    static Uuid topicIdOf(String name) { return new Uuid(0x746F706963000000L, 0x1000L + (name.hashCode() & 0xffffffffL)); }

    Uuid topicId(String name) {
        return ctl.replication.getTopicId(name);
    }

    // -- reset ----------------------------------------------------------------------------------------

    void reset(JsonNode state) {
        for (JsonNode t : state.path("topics")) {
            JsonNode minIsr = t.path("min_insync_replicas");
            if (!minIsr.isMissingNode() && !(minIsr.canConvertToInt() && minIsr.isIntegralNumber() && minIsr.asInt() >= 1)) {
                throw new Refusal("topic " + t.path("name").asText() + ": min_insync_replicas must be an integer >= 1, not " + minIsr);
            }
            int index = 0;
            for (JsonNode p : t.path("partitions")) {
                // without --elr the read-back has no ELR fields: refuse a state whose ELRs would go unseen
                if (!elr && (p.path("elr").size() > 0 || p.path("last_known_elr").size() > 0)) {
                    throw new Refusal("partition " + t.path("name").asText() + "-" + index
                        + " has elr / last_known_elr, but eligible leader replicas are off (start the adapter with --elr)");
                }
                index++;
            }
        }
        ctl = newController();
        current = state;
        batches.clear();
        batchTimes.clear();
        // bootstrap: the metadata.version (and with --elr, what the release bootstraps for ELR), then each
        // broker's registration, then each topic (one batch each)
        List<ApiMessageAndVersion> bootstrap = new ArrayList<>();
        bootstrap.add(new ApiMessageAndVersion(new FeatureLevelRecord()
            .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(mv.featureLevel()), (short) 0));
        if (elr) bootstrap.addAll(KafkaRelease.elrBootstrapRecords(ctl.config));
        appendBatch(bootstrap);
        List<ApiMessageAndVersion> records = new ArrayList<>();
        for (JsonNode b : state.path("brokers")) {
            if (!b.path("registered").asBoolean(true)) continue;
            int id = b.path("id").asInt();
            RegisterBrokerRecord r = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(brokerEpoch(id))
                .setIncarnationId(new Uuid(0x696E6361726E0000L, 0x1000L + id)).setRack(null)
                .setFenced(!b.path("active").asBoolean(true)).setInControlledShutdown(false);
            r.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("localhost")
                .setPort(9092 + id).setSecurityProtocol(SecurityProtocol.PLAINTEXT.id));
            if (mv.isDirectoryAssignmentSupported()) r.setLogDirs(Collections.singletonList(dirOf(id)));
            appendBatch(Collections.singletonList(new ApiMessageAndVersion(r, mv.registerBrokerRecordVersion())));
        }
        for (JsonNode t : state.path("topics")) {
            String name = t.path("name").asText();
            Uuid id = topicIdOf(name);
            records = new ArrayList<>();
            records.add(new ApiMessageAndVersion(new TopicRecord().setName(name).setTopicId(id), (short) 0));
            if (t.path("unclean_leader_election").asBoolean(false)) {
                records.add(new ApiMessageAndVersion(new ConfigRecord().setResourceType(ConfigResource.Type.TOPIC.id())
                    .setResourceName(name).setName(UNCLEAN).setValue("true"), (short) 0));
            }
            if (t.has("min_insync_replicas")) {
                records.add(new ApiMessageAndVersion(new ConfigRecord().setResourceType(ConfigResource.Type.TOPIC.id())
                    .setResourceName(name).setName(MIN_ISR).setValue(Integer.toString(t.path("min_insync_replicas").asInt())),
                    (short) 0));
            }
            int index = 0;
            for (JsonNode p : t.path("partitions")) {
                PartitionRecord r = new PartitionRecord().setPartitionId(index++).setTopicId(id)
                    .setReplicas(ints(p.path("replicas"))).setIsr(ints(p.path("isr")))
                    .setAddingReplicas(ints(p.path("adding"))).setRemovingReplicas(ints(p.path("removing")))
                    .setLeader(p.path("leader").asInt()).setLeaderEpoch(p.path("leader_epoch").asInt())
                    .setPartitionEpoch(p.path("partition_epoch").asInt()).setLeaderRecoveryState((byte) 0);
                if (mv.isDirectoryAssignmentSupported()) {
                    List<Uuid> dirs = new ArrayList<>();
                    for (int b : r.replicas()) dirs.add(dirOf(b));
                    r.setDirectories(dirs);
                }
                // tagged fields: set only when non-empty, as PartitionRegistration.toRecord writes them
                if (p.path("elr").size() > 0) r.setEligibleLeaderReplicas(ints(p.path("elr")));
                if (p.path("last_known_elr").size() > 0) r.setLastKnownElr(ints(p.path("last_known_elr")));
                records.add(new ApiMessageAndVersion(r, mv.partitionRecordVersion()));
            }
            appendBatch(records);
        }
        // the controller has loaded the log: it becomes active, tracking every broker's session from now
        ctl.cluster.activate();
    }

    /** Replay records as one batch of the metadata log (a reset's bootstrap records are replayed as they are). */
    void appendBatch(List<ApiMessageAndVersion> records) {
        for (ApiMessageAndVersion r : records) ctl.replay(r);
        if (!records.isEmpty()) {
            batches.add(new ArrayList<>(records));
            batchTimes.add(ctl.time.milliseconds());
        }
    }

    // -- apply ----------------------------------------------------------------------------------------

    /** The outcome of one action: the records to replay and the response (a kreassign message). */
    static final class Outcome {
        final List<ApiMessageAndVersion> records;
        final ObjectNode response;
        boolean replayed; // the records were replayed while the action ran (session expiry fences one broker at a time)
        Outcome(List<ApiMessageAndVersion> records, ObjectNode response) { this.records = records; this.response = response; }
        Outcome alreadyReplayed() { replayed = true; return this; }
    }

    Outcome apply(JsonNode action) {
        String type = action.path("type").asText();
        switch (type) {
            case "Reassign": {
                AlterPartitionReassignmentsRequestData req = new AlterPartitionReassignmentsRequestData();
                req.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(action.path("topic").asText())
                    .setPartitions(Collections.singletonList(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                        .setPartitionIndex(action.path("partition").asInt()).setReplicas(ints(action.path("replicas"))))));
                return alterReassignments(req);
            }
            case "Cancel": {
                AlterPartitionReassignmentsRequestData req = new AlterPartitionReassignmentsRequestData();
                req.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(action.path("topic").asText())
                    .setPartitions(Collections.singletonList(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                        .setPartitionIndex(action.path("partition").asInt()).setReplicas(null))));
                return alterReassignments(req);
            }
            case "AlterReassignments": {
                JsonNode r = action.path("request");
                if (!r.path("topics").isArray()) throw new Refusal("null topics are not part of the AlterPartitionReassignments schema");
                AlterPartitionReassignmentsRequestData req = new AlterPartitionReassignmentsRequestData()
                    .setTimeoutMs(r.path("timeout_ms").asInt(60000));
                for (JsonNode t : r.path("topics")) {
                    if (!t.path("partitions").isArray()) throw new Refusal("null partitions are not part of the AlterPartitionReassignments schema");
                    List<AlterPartitionReassignmentsRequestData.ReassignablePartition> parts = new ArrayList<>();
                    for (JsonNode p : t.path("partitions")) {
                        parts.add(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                            .setPartitionIndex(p.path("partition_index").asInt())
                            .setReplicas(p.path("replicas").isArray() ? ints(p.path("replicas")) : null));
                    }
                    req.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic()
                        .setName(t.path("name").asText()).setPartitions(parts));
                }
                if (!r.path("allow_replication_factor_change").asBoolean(true)
                        && !KafkaRelease.setAllowReplicationFactorChange(req, false)) {
                    // the release's request has no such field (v0): Kafka's client refuses to build it
                    // (AlterPartitionReassignmentsRequest.Builder.build), so it never reaches the controller
                    ObjectNode out = NODES.objectNode();
                    out.put("type", "AlterPartitionReassignmentsResponse");
                    out.put("error_code", Errors.UNSUPPORTED_VERSION.code());
                    out.put("error_message", "The broker does not support the AllowReplicationFactorChange option for the "
                        + "AlterPartitionReassignments API. Consider re-sending the request without the option or updating "
                        + "the server version");
                    out.putArray("responses");
                    out.put("throttle_time_ms", 0);
                    return new Outcome(Collections.emptyList(), out);
                }
                return alterReassignments(req);
            }
            case "ListReassignments": {
                JsonNode topics = action.path("request").path("topics");
                List<ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics> list = null;
                if (topics.isArray()) {
                    list = new ArrayList<>();
                    for (JsonNode t : topics) {
                        list.add(new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics()
                            .setName(t.path("name").asText()).setPartitionIndexes(ints(t.path("partition_indexes"))));
                    }
                }
                ListPartitionReassignmentsResponseData resp = ctl.replication.listPartitionReassignments(list, Long.MAX_VALUE);
                return new Outcome(Collections.emptyList(), listResponse(resp));
            }
            case "LeaderExpandIsr":
            case "LeaderShrinkIsr": {
                String topic = action.path("topic").asText();
                int index = action.path("partition").asInt();
                int broker = action.path("broker").asInt();
                PartitionRegistration part = partition(topic, index);
                List<Integer> isr = new ArrayList<>();
                for (int b : part.isr) if (b != broker) isr.add(b);
                if (type.equals("LeaderExpandIsr")) isr.add(broker);
                return alterPartition(topic, index, part.leader, isr, part.leaderEpoch, part.partitionEpoch, (short) 3);
            }
            case "AlterPartition":
                return alterPartition(action.path("topic").asText(), action.path("partition").asInt(),
                    action.path("leader").asInt(), ints(action.path("new_isr")), action.path("leader_epoch").asInt(),
                    action.path("partition_epoch").asInt(), (short) action.path("version").asInt(3));
            case "BrokerFail":
                return sessionExpires(action.path("broker").asInt());
            case "BrokerRecover":
                return heartbeat(action.path("broker").asInt());
            case "BrokerControlledShutdown":
                return controlledShutdown(action.path("broker").asInt());
            case "BrokerRestart":
                return restart(action.path("broker").asInt());
            case "BalanceLeaders": {
                ControllerResult<Boolean> r = ctl.replication.maybeBalancePartitionLeaders();
                return new Outcome(r.records(), ack(Errors.NONE, null));
            }
            case "ElectUncleanLeaders": {
                ControllerResult<Boolean> r = ctl.replication.maybeElectUncleanLeaders();
                return new Outcome(r.records(), ack(Errors.NONE, null));
            }
            case "ElectLeaders":
                return electLeaders(action.path("topic").asText(), action.path("partition").asInt(), action.path("election").asText());
            case "CreatePartitions":
                return createPartitions(action.path("topic").asText(), action.path("count").asInt());
            case "DeleteTopic":
                return deleteTopic(action.path("topic").asText());
            case "ControllerFailover": {
                // A new controller replays the metadata log from the beginning; nothing is carried over.
                List<ApiMessageAndVersion> log = new ArrayList<>(ctl.log);
                ctl = newController();
                for (ApiMessageAndVersion r : log) ctl.replay(r);
                ctl.cluster.activate();
                return new Outcome(Collections.emptyList(), ack(Errors.NONE, null));
            }
            default:
                throw new Refusal("Kafka's controller has no counterpart of the action " + type);
        }
    }

    PartitionRegistration partition(String topic, int index) {
        Uuid id = topicId(topic);
        PartitionRegistration p = id == null ? null : ctl.replication.getPartition(id, index);
        if (p == null) throw new Refusal("unknown partition " + topic + "-" + index);
        return p;
    }

    Outcome alterReassignments(AlterPartitionReassignmentsRequestData req) {
        ControllerResult<AlterPartitionReassignmentsResponseData> result = ctl.replication.alterPartitionReassignments(req);
        AlterPartitionReassignmentsResponseData d = result.response();
        ObjectNode out = NODES.objectNode();
        out.put("type", "AlterPartitionReassignmentsResponse");
        out.put("error_code", d.errorCode());
        out.put("error_message", d.errorMessage());
        ArrayNode topics = out.putArray("responses");
        for (AlterPartitionReassignmentsResponseData.ReassignableTopicResponse t : d.responses()) {
            ObjectNode tn = topics.addObject();
            tn.put("name", t.name());
            ArrayNode ps = tn.putArray("partitions");
            for (AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse p : t.partitions()) {
                ObjectNode pn = ps.addObject();
                pn.put("partition_index", p.partitionIndex());
                pn.put("error_code", p.errorCode());
                pn.put("error_message", p.errorMessage());
            }
        }
        out.put("throttle_time_ms", d.throttleTimeMs());
        KafkaRelease.putAllowReplicationFactorChange(out, d);  // v1 (4.1+): the request's option, echoed
        return new Outcome(result.records(), out);
    }

    static ObjectNode listResponse(ListPartitionReassignmentsResponseData d) {
        ObjectNode out = NODES.objectNode();
        out.put("type", "ListPartitionReassignmentsResponse");
        out.put("error_code", d.errorCode());
        out.put("error_message", d.errorMessage());
        ArrayNode topics = out.putArray("topics");
        for (ListPartitionReassignmentsResponseData.OngoingTopicReassignment t : d.topics()) {
            ObjectNode tn = topics.addObject();
            tn.put("name", t.name());
            ArrayNode ps = tn.putArray("partitions");
            for (ListPartitionReassignmentsResponseData.OngoingPartitionReassignment p : t.partitions()) {
                ObjectNode pn = ps.addObject();
                pn.put("partition_index", p.partitionIndex());
                putInts(pn, "replicas", p.replicas());
                putInts(pn, "adding_replicas", p.addingReplicas());
                putInts(pn, "removing_replicas", p.removingReplicas());
            }
        }
        out.put("throttle_time_ms", d.throttleTimeMs());
        return out;
    }

    /** AlterPartition from `leader` with the request version's encoding of the new ISR (v3: with broker epochs). */
    Outcome alterPartition(String topic, int index, int leader, List<Integer> newIsr, int leaderEpoch, int partitionEpoch, short version) {
        // a broker never sends a version its controller does not support (4.0 removed v0 and v1)
        if (version < ApiKeys.ALTER_PARTITION.oldestVersion() || version > ApiKeys.ALTER_PARTITION.latestVersion()) {
            throw new Refusal("Kafka " + KAFKA_VERSION + "'s controller has no AlterPartition v" + version
                + " (versions " + ApiKeys.ALTER_PARTITION.oldestVersion() + " to " + ApiKeys.ALTER_PARTITION.latestVersion() + ")");
        }
        Uuid id = topicId(topic);
        AlterPartitionRequestData.PartitionData pd = new AlterPartitionRequestData.PartitionData()
            .setPartitionIndex(index).setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch).setLeaderRecoveryState((byte) 0);
        if (version >= 3) {
            List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
            for (int b : newIsr) {
                org.apache.kafka.metadata.BrokerRegistration reg = ctl.cluster.registration(b);
                states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(b).setBrokerEpoch(reg == null ? -1 : reg.epoch()));
            }
            pd.setNewIsrWithEpochs(states);
        } else {
            pd.setNewIsr(newIsr);
        }
        AlterPartitionRequestData.TopicData td = KafkaRelease.alterPartitionTopic(topic, id == null ? Uuid.ZERO_UUID : id)
            .setPartitions(Collections.singletonList(pd));
        org.apache.kafka.metadata.BrokerRegistration leaderReg = ctl.cluster.registration(leader);
        AlterPartitionRequestData req = new AlterPartitionRequestData().setBrokerId(leader)
            .setBrokerEpoch(leaderReg == null ? -1 : leaderReg.epoch()).setTopics(Collections.singletonList(td));
        ControllerRequestContext context = new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(ApiKeys.ALTER_PARTITION.id).setRequestApiVersion(version),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
        ControllerResult<AlterPartitionResponseData> result;
        try {
            result = ctl.replication.alterPartition(context, req);
        } catch (ApiException e) { // e.g. STALE_BROKER_EPOCH: QuorumController answers the whole request with it
            return new Outcome(Collections.emptyList(), ack(Errors.forException(e), null));
        }
        AlterPartitionResponseData d = result.response();
        Errors error = Errors.forCode(d.errorCode());
        if (error == Errors.NONE) error = Errors.forCode(d.topics().get(0).partitions().get(0).errorCode());
        // AlterPartition's response has no message field: the Ack carries the error's name.
        return new Outcome(result.records(), ack(error, null));
    }

    /** The broker's session times out: the clock passes the session timeout and every other broker heartbeats. */
    Outcome sessionExpires(int broker) {
        expireSession(broker);
        List<ApiMessageAndVersion> records = new ArrayList<>();
        // maybeFenceOneStaleBroker's records are replayed before the next stale broker is looked for
        for (List<ApiMessageAndVersion> r; (r = KafkaRelease.fenceOneStaleBroker(ctl.replication, ctl.cluster.heartbeatManager())) != null; ) {
            replayStep(r);
            records.addAll(r);
        }
        return new Outcome(records, ack(Errors.NONE, null)).alreadyReplayed();
    }

    /**
     * The clock passes the session timeout while every broker but `broker` heartbeats: each keeps its fencing
     * state and its session (its contact time), so that only `broker`'s session is stale.
     */
    void expireSession(int broker) {
        BrokerHeartbeatManager hb = ctl.cluster.heartbeatManager();
        ctl.time.sleep(SESSION_TIMEOUT_MS + 1);
        for (Map.Entry<Integer, org.apache.kafka.metadata.BrokerRegistration> e : ctl.cluster.brokerRegistrations().entrySet()) {
            if (e.getKey() != broker) {
                KafkaRelease.trackHeartbeat(ctl.cluster, e.getKey(), e.getValue().epoch());
                hb.touch(e.getKey(), e.getValue().fenced(), Long.MAX_VALUE);
            }
        }
    }

    /** The broker heartbeats, caught up with the metadata log: a fenced broker is unfenced. */
    Outcome heartbeat(int broker) {
        ControllerResult<BrokerHeartbeatReply> r;
        try {
            r = processHeartbeat(broker, false);
        } catch (ApiException e) {
            return new Outcome(Collections.emptyList(), ack(Errors.forException(e), null));
        }
        return new Outcome(r.records(), ack(Errors.NONE, null));
    }

    /** A heartbeat asking to shut down; as QuorumController, a granted controlled shutdown records its offset. */
    Outcome controlledShutdown(int broker) {
        ControllerResult<BrokerHeartbeatReply> r;
        try {
            r = processHeartbeat(broker, true);
        } catch (ApiException e) {
            return new Outcome(Collections.emptyList(), ack(Errors.forException(e), null));
        }
        replayStep(r.records());
        if (r.response().inControlledShutdown()) {
            ctl.cluster.heartbeatManager().maybeUpdateControlledShutdownOffset(broker, ctl.offset - 1);
        }
        return new Outcome(r.records(), ack(Errors.NONE, null)).alreadyReplayed();
    }

    /** A heartbeat at the broker's registered epoch, caught up with the log, as QuorumController.processBrokerHeartbeat. */
    ControllerResult<BrokerHeartbeatReply> processHeartbeat(int broker, boolean wantShutDown) {
        long epoch = currentEpoch(broker);
        OptionalLong registered = ctl.cluster.registerBrokerRecordOffset(broker);
        BrokerHeartbeatRequestData req = new BrokerHeartbeatRequestData().setBrokerId(broker).setBrokerEpoch(epoch)
            .setCurrentMetadataOffset(ctl.offset).setWantFence(false).setWantShutDown(wantShutDown);
        KafkaRelease.trackHeartbeat(ctl.cluster, broker, epoch); // the session's contact time, before the write event
        return ctl.replication.processBrokerHeartbeat(req, registered.orElse(0L));
    }

    /**
     * The broker restarts after an unclean shutdown: its session expired (the clock passes the timeout,
     * the other brokers heartbeat) and it registers a new incarnation before the controller fenced it.
     */
    Outcome restart(int broker) {
        expireSession(broker);
        org.apache.kafka.common.message.BrokerRegistrationRequestData req = new org.apache.kafka.common.message.BrokerRegistrationRequestData()
            .setBrokerId(broker).setClusterId(ctl.cluster.clusterId()).setIsMigratingZkBroker(false)
            .setIncarnationId(new Uuid(0x696E6361726E0000L + (++restarts), 0x1000L + broker)).setRack(null)
            .setPreviousBrokerEpoch(-1L); // an unclean shutdown leaves no clean-shutdown file: no previous epoch
        req.listeners().add(new org.apache.kafka.common.message.BrokerRegistrationRequestData.Listener()
            .setName("PLAINTEXT").setHost("localhost").setPort(9092 + broker).setSecurityProtocol(SecurityProtocol.PLAINTEXT.id));
        // QuorumController.registerBroker checks the broker against the finalized features and the kraft.version
        // (0: the adapter's controller quorum is static)
        Map<String, Short> finalized = new TreeMap<>(ctl.features.finalizedFeatures(Long.MAX_VALUE).featureMap());
        Map<String, Short> controllerFeatures = new HashMap<>(finalized);
        controllerFeatures.put(KRaftVersion.FEATURE_NAME, KRaftVersion.KRAFT_VERSION_0.featureLevel());
        // the broker supports metadata.version up to the one in use, and every other finalized feature
        req.features().add(new org.apache.kafka.common.message.BrokerRegistrationRequestData.Feature()
            .setName(MetadataVersion.FEATURE_NAME).setMinSupportedVersion(KafkaRelease.BROKER_MINIMUM_METADATA_VERSION.featureLevel())
            .setMaxSupportedVersion(mv.featureLevel()));
        for (Map.Entry<String, Short> f : finalized.entrySet()) {
            if (f.getKey().equals(MetadataVersion.FEATURE_NAME)) continue;
            req.features().add(new org.apache.kafka.common.message.BrokerRegistrationRequestData.Feature()
                .setName(f.getKey()).setMinSupportedVersion((short) 0).setMaxSupportedVersion(f.getValue()));
        }
        if (mv.isDirectoryAssignmentSupported()) req.setLogDirs(Collections.singletonList(dirOf(broker)));
        ControllerResult<org.apache.kafka.metadata.BrokerRegistrationReply> r;
        try {
            // the new broker epoch is the offset of its RegisterBrokerRecord, as in QuorumController
            r = KafkaRelease.registerBroker(ctl.cluster, req, ctl.offset,
                new FinalizedControllerFeatures(controllerFeatures, Long.MAX_VALUE));
        } catch (ApiException e) {
            return new Outcome(Collections.emptyList(), ack(Errors.forException(e), null));
        }
        return new Outcome(r.records(), ack(Errors.NONE, null));
    }

    Outcome electLeaders(String topic, int index, String election) {
        ElectLeadersRequestData req = new ElectLeadersRequestData().setElectionType((byte) (election.equals("UNCLEAN") ? 1 : 0));
        req.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic(topic)
            .setPartitions(Collections.singletonList(index)));
        ControllerResult<ElectLeadersResponseData> r = ctl.replication.electLeaders(req);
        ElectLeadersResponseData.PartitionResult pr = r.response().replicaElectionResults().get(0).partitionResult().get(0);
        return new Outcome(r.records(), ack(Errors.forCode(pr.errorCode()), pr.errorMessage(), true));
    }

    /** A request context as QuorumController builds one (no controller mutation quota in force). */
    static ControllerRequestContext context(ApiKeys api, short version) {
        return new ControllerRequestContext(new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
    }

    /** CreatePartitions without assignments: Kafka picks the replication factor (partition 0's replicas) and the placement. */
    Outcome createPartitions(String topic, int count) {
        CreatePartitionsRequestData.CreatePartitionsTopic t = new CreatePartitionsRequestData.CreatePartitionsTopic()
            .setName(topic).setCount(count).setAssignments(null);
        ControllerResult<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> r =
            ctl.replication.createPartitions(context(ApiKeys.CREATE_PARTITIONS, (short) 3), Collections.singletonList(t));
        CreatePartitionsResponseData.CreatePartitionsTopicResult res = r.response().get(0);
        return new Outcome(r.records(), ack(Errors.forCode(res.errorCode()), res.errorMessage(), true));
    }

    /** DeleteTopics by name, as QuorumController.deleteTopics: the name's id (findTopicIds), then deleteTopics. */
    Outcome deleteTopic(String topic) {
        Uuid id = ctl.replication.getTopicId(topic);
        if (id == null) { // findTopicIds: new ApiError(UNKNOWN_TOPIC_OR_PARTITION), the error's default message
            return new Outcome(Collections.emptyList(),
                ack(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.message(), true));
        }
        ControllerResult<Map<Uuid, ApiError>> r =
            ctl.replication.deleteTopics(context(ApiKeys.DELETE_TOPICS, (short) 6), Collections.singletonList(id));
        ApiError e = r.response().get(id);
        return new Outcome(r.records(), ack(e.error(), e.message(), true));
    }

    static ObjectNode ack(Errors error, String message) {
        return ack(error, message, false);
    }

    /** An Ack: for responses without a message field the message is the error's name (null for NONE). */
    static ObjectNode ack(Errors error, String message, boolean hasMessageField) {
        ObjectNode out = NODES.objectNode();
        out.put("type", "Ack");
        out.put("error_code", error.code());
        out.put("error_message", hasMessageField ? message : (error == Errors.NONE ? null : error.name()));
        return out;
    }

    // -- replaying a step ----------------------------------------------------------------------------

    void replayStep(List<ApiMessageAndVersion> records) {
        if (!records.isEmpty()) {
            batches.add(new ArrayList<>(records));
            batchTimes.add(ctl.time.milliseconds());
        }
        for (ApiMessageAndVersion r : records) {
            if ("wrong-partition".equals(bug) && r.message() instanceof PartitionChangeRecord) {
                PartitionChangeRecord c = ((PartitionChangeRecord) r.message()).duplicate();
                int n = partitionCount(c.topicId());
                if (n > 1) {
                    c.setPartitionId((c.partitionId() + 1) % n);
                    r = new ApiMessageAndVersion(c, r.version());
                }
            }
            ctl.replay(r);
        }
    }

    int partitionCount(Uuid topicId) {
        int n = 0;
        while (ctl.replication.getPartition(topicId, n) != null) n++;
        return n;
    }

    // -- reading the state back ----------------------------------------------------------------------

    ObjectNode state() {
        ObjectNode out = NODES.objectNode();
        ArrayNode brokers = out.putArray("brokers");
        for (JsonNode b : current.path("brokers")) {
            int id = b.path("id").asInt();
            ObjectNode bn = brokers.addObject();
            bn.put("id", id);
            bn.put("registered", ctl.cluster.registration(id) != null);
            bn.put("active", ctl.cluster.isActive(id));
        }
        ArrayNode topics = out.putArray("topics");
        for (JsonNode t : current.path("topics")) {
            String name = t.path("name").asText();
            Uuid id = topicId(name);
            if (id == null) continue; // deleted (RemoveTopicRecord)
            ObjectNode tn = topics.addObject();
            tn.put("name", name);
            ArrayNode parts = tn.putArray("partitions");
            int count = partitionCount(id);
            for (int i = 0; i < count; i++) {
                PartitionRegistration p = ctl.replication.getPartition(id, i);
                ObjectNode pn = parts.addObject();
                putInts(pn, "replicas", p.replicas);
                putInts(pn, "isr", p.isr);
                pn.put("leader", p.leader);
                putInts(pn, "adding", p.addingReplicas);
                putInts(pn, "removing", p.removingReplicas);
                pn.put("leader_epoch", p.leaderEpoch);
                pn.put("partition_epoch", p.partitionEpoch);
                if (elr) {
                    putInts(pn, "elr", p.elr);
                    putInts(pn, "last_known_elr", p.lastKnownElr);
                }
                pn.putNull("original");
                JsonNode before = t.path("partitions").path(i).path("log");
                if (before.isMissingNode()) pn.putNull("log"); else pn.set("log", before);
            }
            tn.put("unclean_leader_election", ctl.config.uncleanLeaderElectionEnabledForTopic(name));
            if (t.has("min_insync_replicas")) { // the effective value (topic, cluster, static config), as the controller reads it
                tn.put("min_insync_replicas", Integer.parseInt(ctl.config.getTopicConfig(name, MIN_ISR).value()));
            }
        }
        out.putNull("zk");
        out.putNull("kip236");
        return out;
    }

    /** The payload kafka-dump-log.sh --cluster-metadata-decoder prints for one record. */
    static ObjectNode dumpLogPayload(ApiMessageAndVersion r) {
        ObjectNode json = NODES.objectNode();
        json.put("type", MetadataRecordType.fromId(r.message().apiKey()).toString());
        json.put("version", (int) r.version());
        json.set("data", MetadataJsonConverters.writeJson(r.message(), r.version()));
        return json;
    }

    /** Write the batches as a __cluster_metadata segment would hold them and print them as DumpLogSegments does. */
    List<String> dumpLog() {
        List<String> out = new ArrayList<>();
        out.add("Dumping 00000000000000000000.log");
        out.add("Log starting offset: 0");
        long offset = 0;
        long position = 0;
        RecordSerde<ApiMessageAndVersion> serde = MetadataRecordSerde.INSTANCE;
        for (int b = 0; b < batches.size(); b++) {
            List<ByteBuffer> values = new ArrayList<>();
            for (ApiMessageAndVersion r : batches.get(b)) {
                ObjectSerializationCache cache = new ObjectSerializationCache();
                ByteBuffer value = ByteBuffer.allocate(serde.recordSize(r, cache));
                serde.write(r, cache, new ByteBufferAccessor(value));
                value.flip();
                values.add(value);
            }
            position += dumpBatch(out, offset, position, batchTimes.get(b), values,
                value -> dumpLogPayload(serde.read(new ByteBufferAccessor(value), value.remaining())).toString());
            offset += values.size();
        }
        return out;
    }

    /**
     * Write one batch of metadata records as a __cluster_metadata segment holds it (RecordBatches.builder) and print
     * it as kafka-dump-log.sh does, each record's payload by `payload`; returns its size. The batch and record
     * classes moved in 4.3: `var` keeps their package out of this file.
     */
    static int dumpBatch(List<String> out, long baseOffset, long position, long timestamp, List<ByteBuffer> values,
                         Function<ByteBuffer, String> payload) {
        var builder = RecordBatches.builder(baseOffset, timestamp);
        long offset = baseOffset;
        for (ByteBuffer value : values) builder.appendWithOffset(offset++, timestamp, null, value);
        int size = 0;
        for (var batch : builder.build().batches()) {
            out.add("baseOffset: " + batch.baseOffset() + " lastOffset: " + batch.lastOffset() + " count: " + batch.countOrNull() +
                " baseSequence: " + batch.baseSequence() + " lastSequence: " + batch.lastSequence() +
                " producerId: " + batch.producerId() + " producerEpoch: " + batch.producerEpoch() +
                " partitionLeaderEpoch: " + batch.partitionLeaderEpoch() + " isTransactional: " + batch.isTransactional() +
                " isControl: " + batch.isControlBatch() + " deleteHorizonMs: " + batch.deleteHorizonMs() +
                " position: " + (position + size) + " " + batch.timestampType() + ": " + batch.maxTimestamp() +
                " size: " + batch.sizeInBytes() + " magic: " + batch.magic() +
                " compresscodec: " + batch.compressionType().name + " crc: " + batch.checksum() + " isvalid: " + batch.isValid());
            for (var record : batch) {
                out.add("| offset: " + record.offset() + " " + batch.timestampType() + ": " + record.timestamp() +
                    " keySize: " + record.keySize() + " valueSize: " + record.valueSize() +
                    " sequence: " + record.sequence() + " headerKeys: []" + " payload: " + payload.apply(record.value()));
            }
            size += batch.sizeInBytes();
        }
        return size;
    }

    // -- helpers ---------------------------------------------------------------------------------------

    static final class Refusal extends RuntimeException {
        Refusal(String message) { super(message); }
    }

    static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        for (JsonNode n : array) out.add(n.asInt());
        return out;
    }

    static void putInts(ObjectNode node, String key, int[] values) {
        ArrayNode a = node.putArray(key);
        for (int v : values) a.add(v);
    }

    static void putInts(ObjectNode node, String key, List<Integer> values) {
        ArrayNode a = node.putArray(key);
        for (int v : values) a.add(v);
    }

    // -- the protocol loop -----------------------------------------------------------------------------

    ObjectNode handle(JsonNode req) {
        String op = req.path("op").asText();
        ObjectNode reply = NODES.objectNode();
        switch (op) {
            case "reset":
                checkProfile(req);
                reset(req.path("state"));
                reply.put("ok", true);
                return reply;
            case "apply": {
                if (req.has("state")) {
                    checkProfile(req);
                    reset(req.path("state"));
                }
                if (ctl == null) throw new Refusal("apply before reset");
                Outcome o = apply(req.path("action"));
                if (!o.replayed) replayStep(o.records);
                reply.put("ok", true);
                reply.set("state", state());
                reply.set("response", o.response);
                if (req.path("records").asBoolean(false)) {
                    ArrayNode rs = reply.putArray("records");
                    for (ApiMessageAndVersion r : o.records) rs.add(dumpLogPayload(r));
                }
                return reply;
            }
            case "batch": {
                // every action from the same state (one round trip per explored state): reset before each
                checkProfile(req);
                reply.put("ok", true);
                ArrayNode results = reply.putArray("results");
                for (JsonNode action : req.path("actions")) {
                    ObjectNode one = results.addObject();
                    try {
                        reset(req.path("state"));
                        Outcome o = apply(action);
                        if (!o.replayed) replayStep(o.records);
                        one.put("ok", true);
                        one.set("state", state());
                        one.set("response", o.response);
                    } catch (Refusal e) {
                        one.put("ok", false);
                        one.put("error", e.getMessage());
                    } catch (Exception e) {
                        one.put("ok", false);
                        one.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                        e.printStackTrace(System.err);
                    }
                }
                return reply;
            }
            case "dump_log": {
                // the metadata log since the last reset, exactly as kafka-dump-log.sh --cluster-metadata-decoder prints it
                reply.put("ok", true);
                ArrayNode lines = reply.putArray("lines");
                for (String l : dumpLog()) lines.add(l);
                return reply;
            }
            case "version": {
                reply.put("ok", true);
                reply.put("kafka_version", KAFKA_VERSION);
                reply.put("kafka_commit", KAFKA_COMMIT);
                reply.put("metadata_version", mv.version());
                reply.put("java_version", System.getProperty("java.version"));
                reply.put("layer", KafkaRelease.LAYER);
                ArrayNode versions = reply.putArray("metadata_versions");
                for (MetadataVersion v : acceptedMetadataVersions()) versions.add(v.version());
                reply.put("latest_production_metadata_version", MetadataVersion.LATEST_PRODUCTION.version());
                reply.put("elr_supported", KafkaRelease.elrUnsupportedReason(mv) == null);
                reply.put("elr_default", KafkaRelease.elrDefault());
                reply.put("elr", elr);
                return reply;
            }
            case "close":
                reply.put("ok", true);
                return reply;
            default:
                throw new Refusal("op: unknown op '" + op + "' (reset, apply, close)");
        }
    }

    static void checkProfile(JsonNode req) {
        String profile = req.path("profile").asText("kraft");
        if (!profile.equals("kraft")) {
            throw new Refusal("Kafka " + minor(KAFKA_VERSION) + "'s KRaft controller implements the profile kraft, not " + profile);
        }
    }

    /** "3.9.2" -> "3.9" */
    static String minor(String version) {
        String[] parts = version.split("\\.");
        return parts.length < 2 ? version : parts[0] + "." + parts[1];
    }

    /**
     * The metadata.versions this release accepts for the adapter, in Kafka's order: from the oldest one it still
     * supports (KafkaRelease.OLDEST_METADATA_VERSION) up to its latest production one.
     */
    static List<MetadataVersion> acceptedMetadataVersions() {
        List<MetadataVersion> out = new ArrayList<>();
        for (MetadataVersion v : MetadataVersion.VERSIONS) {
            if (v.isAtLeast(KafkaRelease.OLDEST_METADATA_VERSION) && !v.isAtLeast(MetadataVersion.LATEST_PRODUCTION)) out.add(v);
        }
        out.add(MetadataVersion.LATEST_PRODUCTION);
        return out;
    }

    /**
     * Parse --metadata-version as MetadataVersion.fromVersionString does ("3.9-IV0", or "3.9" for the release's last
     * level), accepting only the release's accepted levels (the string parser's signature differs between releases).
     */
    static MetadataVersion parseMetadataVersion(String text) {
        List<MetadataVersion> accepted = acceptedMetadataVersions();
        MetadataVersion found = null;
        for (MetadataVersion v : MetadataVersion.VERSIONS) {
            if (v.version().equals(text) || v.shortVersion().equals(text)) found = v; // the last level of a release wins
        }
        if (found == null || !accepted.contains(found)) {
            throw new Refusal("--metadata-version " + text + ": " + (found == null ? "no such level in" : "not accepted by") + " Kafka "
                + KAFKA_VERSION + " (accepted: " + accepted.get(0).version() + " .. "
                + accepted.get(accepted.size() - 1).version() + ")");
        }
        return found;
    }

    /** The adapter for the command line; a Refusal names an argument this release cannot honour. */
    static KreassignAdapter fromArguments(String[] args) {
        MetadataVersion mv = MetadataVersion.LATEST_PRODUCTION;
        boolean zk = false;
        boolean elr = false;
        String bug = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--metadata-version":
                    if (i + 1 == args.length) throw new Refusal("--metadata-version needs a value");
                    mv = parseMetadataVersion(args[++i]);
                    break;
                case "--zk-migration": zk = true; break;
                case "--elr": elr = true; break;
                case "--bug":
                    if (i + 1 == args.length) throw new Refusal("--bug needs a value");
                    bug = args[++i];
                    break;
                default:
                    throw new Refusal("unknown argument " + args[i]);
            }
        }
        if (zk && !KafkaRelease.ZK_MIGRATION) {
            throw new Refusal("--zk-migration: Kafka " + KAFKA_VERSION
                + " has no ZooKeeper-migration mode (Kafka 4.0 removed ZooKeeper)");
        }
        if (elr) {
            String reason = KafkaRelease.elrUnsupportedReason(mv);
            if (reason != null) {
                throw new Refusal("--elr: Kafka " + KAFKA_VERSION + " cannot enable eligible leader replicas at metadata.version "
                    + mv.version() + ": " + reason);
            }
        }
        return new KreassignAdapter(mv, zk, elr, bug);
    }

    public static void main(String[] args) throws Exception {
        KreassignAdapter adapter;
        try {
            adapter = fromArguments(args);
        } catch (Refusal e) {
            System.err.println("KreassignAdapter: " + e.getMessage());
            System.exit(2);
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            ObjectNode reply;
            boolean close = false;
            try {
                JsonNode req = JSON.readTree(line);
                close = "close".equals(req.path("op").asText());
                reply = adapter.handle(req);
            } catch (Refusal e) {
                reply = NODES.objectNode();
                reply.put("ok", false);
                reply.put("error", e.getMessage());
            } catch (Exception e) { // a Kafka exception: report it as a refusal naming it (the session goes on)
                reply = NODES.objectNode();
                reply.put("ok", false);
                reply.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                e.printStackTrace(System.err);
            }
            out.write(JSON.writeValueAsString(reply));
            out.write('\n');
            out.flush();
            if (close) break;
        }
    }
}
