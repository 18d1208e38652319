/*
 * kreassign's Kafka adapter, layer v4_3: what KreassignAdapter (java/core) calls differently from one Kafka
 * release to another, for Kafka 4.3.x.
 *
 * What differs from layer v4_0:
 *  - The record-batch classes the metadata log is written with (MemoryRecords, MemoryRecordsBuilder,
 *    RecordBatch, MutableRecordBatch, Record) moved from org.apache.kafka.common.record to
 *    org.apache.kafka.common.record.internal (only TimestampType stayed): dumpBatch imports them from there.
 * The controller's own wiring is unchanged from 4.0 as far as the adapter goes (4.3 adds cordoned log
 * directories, which need no wiring: a broker with no cordoned directory stays usable, and a heartbeat
 * without cordonedLogDirs changes none).
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;

final class KafkaRelease {
    private KafkaRelease() { }

    static final String LAYER = "v4_3";

    /** The oldest metadata.version this release supports at all. */
    static final MetadataVersion OLDEST_METADATA_VERSION = MetadataVersion.MINIMUM_VERSION;

    /** The oldest metadata.version a broker of this release declares it supports (its registration's range). */
    static final MetadataVersion BROKER_MINIMUM_METADATA_VERSION = MetadataVersion.MINIMUM_VERSION;

    /** No ZooKeeper, no migration mode. */
    static final boolean ZK_MIGRATION = false;

    /** The managers as QuorumController's constructor wires them; ELR follows the finalized feature. */
    static KreassignAdapter.Controller newController(KreassignAdapter.ManualTime time, MetadataVersion mv, boolean zkMigration) {
        LogContext logContext = new LogContext();
        SnapshotRegistry registry = new SnapshotRegistry(logContext);
        FeatureControlManager features = new FeatureControlManager.Builder().setLogContext(logContext).setSnapshotRegistry(registry)
            .setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultSupportedFeatureMap(true), List.of(0))).build();
        ConfigurationControlManager config = new ConfigurationControlManager.Builder().setLogContext(logContext)
            .setSnapshotRegistry(registry).setKafkaConfigSchema(KreassignAdapter.schema()).setStaticConfig(new HashMap<>())
            .setFeatureControl(features).build();
        final ReplicationControlManager[] holder = new ReplicationControlManager[1];
        ClusterControlManager cluster = new ClusterControlManager.Builder().setLogContext(logContext).setTime(time)
            .setSnapshotRegistry(registry).setSessionTimeoutNs(KreassignAdapter.SESSION_TIMEOUT_MS * 1_000_000L)
            .setReplicaPlacer(new StripedReplicaPlacer(new Random(0))).setFeatureControlManager(features)
            .setBrokerShutdownHandler((id, isCleanShutdown, records) -> holder[0].handleBrokerShutdown(id, isCleanShutdown, records))
            .build();
        ReplicationControlManager replication = new ReplicationControlManager.Builder().setSnapshotRegistry(registry)
            .setLogContext(logContext).setMaxElectionsPerImbalance(Integer.MAX_VALUE)
            .setConfigurationControl(config).setClusterControl(cluster).setCreateTopicPolicy(Optional.empty())
            .setFeatureControl(features).build();
        holder[0] = replication;
        return new KreassignAdapter.Controller(time, config, features, cluster, replication);
    }

    /** ClusterControlManager.registerBroker as QuorumController.registerBroker calls it for a v3+ request. */
    static ControllerResult<BrokerRegistrationReply> registerBroker(ClusterControlManager cluster, BrokerRegistrationRequestData request,
                                                                    long newBrokerEpoch, FinalizedControllerFeatures finalized) {
        return cluster.registerBroker(request, newBrokerEpoch, finalized, true);
    }

    /** The heartbeat's contact time, which QuorumController.processBrokerHeartbeat records before its write event. */
    static void trackHeartbeat(ClusterControlManager cluster, int brokerId, long brokerEpoch) {
        cluster.trackBrokerHeartbeat(brokerId, brokerEpoch);
    }

    /**
     * One run of the maybeFenceOneStaleBroker task: its records (fencing the broker whose session expired, or none
     * for a session of an unknown broker or an old epoch); null when it found no expired session.
     */
    static List<ApiMessageAndVersion> fenceOneStaleBroker(ReplicationControlManager replication, BrokerHeartbeatManager hb) {
        ControllerResult<Boolean> r = replication.maybeFenceOneStaleBroker();
        return r.response() ? r.records() : null;
    }

    /** AlterPartition's topic, by id (v2 and later). */
    static AlterPartitionRequestData.TopicData alterPartitionTopic(String name, Uuid id) {
        return new AlterPartitionRequestData.TopicData().setTopicId(id);
    }

    /** Why eligible.leader.replicas.version 1 cannot be set at `mv` (Feature.validateVersion's message), or null. */
    static String elrUnsupportedReason(MetadataVersion mv) {
        try {
            Feature.validateVersion(EligibleLeaderReplicasVersion.ELRV_1, Map.of(MetadataVersion.FEATURE_NAME, mv.featureLevel()));
            return null;
        } catch (IllegalArgumentException e) {
            short needed = EligibleLeaderReplicasVersion.ELRV_1.dependencies().get(MetadataVersion.FEATURE_NAME);
            return e.getMessage() + " (" + MetadataVersion.fromFeatureLevel(needed).version() + ")";
        }
    }

    /** Whether the storage tool formats a new cluster with ELR on: the feature's default level at LATEST_PRODUCTION. */
    static boolean elrDefault() {
        return Feature.ELIGIBLE_LEADER_REPLICAS_VERSION.defaultLevel(MetadataVersion.LATEST_PRODUCTION)
            >= EligibleLeaderReplicasVersion.ELRV_1.featureLevel();
    }

    /**
     * The bootstrap records that enable ELR: the feature's FeatureLevelRecord, and the cluster-level
     * min.insync.replicas that ActivationRecordsGenerator adds when the bootstrap enables ELR.
     */
    static List<ApiMessageAndVersion> elrBootstrapRecords(ConfigurationControlManager config) {
        return List.of(
            new ApiMessageAndVersion(new FeatureLevelRecord().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
                .setFeatureLevel(EligibleLeaderReplicasVersion.ELRV_1.featureLevel()), (short) 0),
            new ApiMessageAndVersion(new ConfigRecord().setResourceType(ConfigResource.Type.BROKER.id()).setResourceName("")
                .setName(KreassignAdapter.MIN_ISR).setValue(Integer.toString(config.getStaticallyConfiguredMinInsyncReplicas())),
                (short) 0));
    }

    /**
     * Write one batch of metadata records as a __cluster_metadata segment holds it (MemoryRecords, magic 2,
     * uncompressed) and print it as kafka-dump-log.sh does, each record's payload by `payload`; returns its size.
     */
    static int dumpBatch(List<String> out, long baseOffset, long position, long timestamp, List<ByteBuffer> values,
                         Function<ByteBuffer, String> payload) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.MAGIC_VALUE_V2,
            Compression.NONE, TimestampType.CREATE_TIME, baseOffset, timestamp, -1L, (short) -1, -1, false, false, 1);
        long offset = baseOffset;
        for (ByteBuffer value : values) builder.appendWithOffset(offset++, timestamp, null, value);
        int size = 0;
        for (MutableRecordBatch batch : builder.build().batches()) {
            out.add("baseOffset: " + batch.baseOffset() + " lastOffset: " + batch.lastOffset() + " count: " + batch.countOrNull() +
                " baseSequence: " + batch.baseSequence() + " lastSequence: " + batch.lastSequence() +
                " producerId: " + batch.producerId() + " producerEpoch: " + batch.producerEpoch() +
                " partitionLeaderEpoch: " + batch.partitionLeaderEpoch() + " isTransactional: " + batch.isTransactional() +
                " isControl: " + batch.isControlBatch() + " deleteHorizonMs: " + batch.deleteHorizonMs() +
                " position: " + (position + size) + " " + batch.timestampType() + ": " + batch.maxTimestamp() +
                " size: " + batch.sizeInBytes() + " magic: " + batch.magic() +
                " compresscodec: " + batch.compressionType().name + " crc: " + batch.checksum() + " isvalid: " + batch.isValid());
            for (Record record : batch) {
                out.add("| offset: " + record.offset() + " " + batch.timestampType() + ": " + record.timestamp() +
                    " keySize: " + record.keySize() + " valueSize: " + record.valueSize() +
                    " sequence: " + record.sequence() + " headerKeys: []" + " payload: " + payload.apply(record.value()));
            }
            size += batch.sizeInBytes();
        }
        return size;
    }

    /** AlterPartitionReassignments v1's AllowReplicationFactorChange (KIP-860, 4.1): set it; true when the release has it. */
    static boolean setAllowReplicationFactorChange(org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData req,
                                                   boolean allow) {
        req.setAllowReplicationFactorChange(allow);
        return true;
    }

    /** The response echoes the request's AllowReplicationFactorChange (v1). */
    static void putAllowReplicationFactorChange(com.fasterxml.jackson.databind.node.ObjectNode out,
                                                org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData d) {
        out.put("allow_replication_factor_change", d.allowReplicationFactorChange());
    }
}
