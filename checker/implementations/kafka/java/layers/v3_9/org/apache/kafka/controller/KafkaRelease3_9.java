/*
 * kreassign's Kafka adapter, layer v3_9: what KreassignAdapter (java/core) calls differently from one Kafka
 * release to another, for Kafka 3.9.x. The core calls it as KafkaRelease, which the build generates as
 * `final class KafkaRelease extends KafkaRelease3_9` for a 3.9 release (checker/implementations/kafka/__init__.py).
 *
 * In 3.9 the controller wires its managers with a ZooKeeper-migration switch
 * (ClusterControlManager.Builder.setZkMigrationEnabled) and an unclean-shutdown handler
 * (BrokerUncleanShutdownHandler); BrokerHeartbeatManager keeps each broker's last contact time itself
 * (touch) and findOneStaleBroker names the stale one; eligible leader replicas are a static controller
 * config (eligible.leader.replicas.enable) that works only at metadata.version 4.0-IV0, which 3.9 ships
 * as unstable, so the adapter cannot enable them.
 *
 * The layer's other files wrap a class that a later release moved to another package (RecordBatches:
 * MemoryRecords & co., moved in 4.3; LogContexts: LogContext, moved in 4.4): the newest layer not newer
 * than the release that has a file of that name supplies it, so those files serve 4.x too.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Random;

class KafkaRelease3_9 {
    KafkaRelease3_9() { }

    /** The oldest metadata.version accepted: the first one the log can hold (a FeatureLevelRecord, 3.3-IV0). */
    static final MetadataVersion OLDEST_METADATA_VERSION = MetadataVersion.MINIMUM_BOOTSTRAP_VERSION;

    /** The oldest metadata.version a broker of this release declares it supports (its registration's range). */
    static final MetadataVersion BROKER_MINIMUM_METADATA_VERSION = MetadataVersion.MINIMUM_KRAFT_VERSION;

    /** 3.9 still has ZooKeeper-migration mode (zookeeper.metadata.migration.enable). */
    static final boolean ZK_MIGRATION = true;

    /** The managers as QuorumController's constructor wires them (ELR off, as 3.9's default). */
    static KreassignAdapter.Controller newController(KreassignAdapter.ManualTime time, MetadataVersion mv, boolean zkMigration) {
        var logContext = LogContexts.create();
        SnapshotRegistry registry = new SnapshotRegistry(logContext);
        ConfigurationControlManager config = new ConfigurationControlManager.Builder().setSnapshotRegistry(registry)
            .setKafkaConfigSchema(KreassignAdapter.schema()).setStaticConfig(new HashMap<>()).build();
        FeatureControlManager features = new FeatureControlManager.Builder().setSnapshotRegistry(registry)
            .setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultFeatureMap(true), Collections.singletonList(0)))
            .setMetadataVersion(mv).build();
        final ReplicationControlManager[] holder = new ReplicationControlManager[1];
        ClusterControlManager cluster = new ClusterControlManager.Builder().setLogContext(logContext).setTime(time)
            .setSnapshotRegistry(registry).setSessionTimeoutNs(KreassignAdapter.SESSION_TIMEOUT_MS * 1_000_000L)
            .setReplicaPlacer(new StripedReplicaPlacer(new Random(0))).setFeatureControlManager(features)
            .setZkMigrationEnabled(zkMigration)
            .setBrokerUncleanShutdownHandler((id, records) -> holder[0].handleBrokerUncleanShutdown(id, records))
            .build();
        ReplicationControlManager replication = new ReplicationControlManager.Builder().setSnapshotRegistry(registry)
            .setLogContext(logContext).setMaxElectionsPerImbalance(Integer.MAX_VALUE)
            .setConfigurationControl(config).setClusterControl(cluster).setCreateTopicPolicy(Optional.empty())
            .setFeatureControl(features).setEligibleLeaderReplicasEnabled(false).build();
        holder[0] = replication;
        return new KreassignAdapter.Controller(time, config, features, cluster, replication);
    }

    /** ClusterControlManager.registerBroker as QuorumController.registerBroker calls it. */
    static ControllerResult<BrokerRegistrationReply> registerBroker(ClusterControlManager cluster, BrokerRegistrationRequestData request,
                                                                    long newBrokerEpoch, FinalizedControllerFeatures finalized) {
        return cluster.registerBroker(request, newBrokerEpoch, finalized);
    }

    /** Nothing to do before the heartbeat's write event: 3.9's BrokerHeartbeatManager.touch records the contact time. */
    static void trackHeartbeat(ClusterControlManager cluster, int brokerId, long brokerEpoch) { }

    /** Fence the stale broker findOneStaleBroker names (maybeFenceOneStaleBroker); null when no broker is stale. */
    static List<ApiMessageAndVersion> fenceOneStaleBroker(ReplicationControlManager replication, BrokerHeartbeatManager hb) {
        if (!hb.findOneStaleBroker().isPresent()) return null;
        return replication.maybeFenceOneStaleBroker().records();
    }

    /** AlterPartition's topic: v0 and v1 name it, v2 on give its id (3.9 reads whichever the version has). */
    static AlterPartitionRequestData.TopicData alterPartitionTopic(String name, Uuid id) {
        return new AlterPartitionRequestData.TopicData().setTopicName(name).setTopicId(id);
    }

    /** Why ELR cannot be enabled: always (its metadata.version is not a production level of 3.9). */
    static String elrUnsupportedReason(MetadataVersion mv) {
        MetadataVersion first = null;
        for (MetadataVersion v : MetadataVersion.VERSIONS) {
            if (first == null && v.isElrSupported()) first = v;
        }
        return "3.9's eligible.leader.replicas.enable needs metadata.version " + first.version() + " (MetadataVersion.isElrSupported), "
            + "later than its latest production level " + MetadataVersion.LATEST_PRODUCTION.version();
    }

    /** A cluster formatted by 3.9 never has ELR: it has no eligible.leader.replicas.version feature. */
    static boolean elrDefault() {
        return false;
    }

    static List<ApiMessageAndVersion> elrBootstrapRecords(ConfigurationControlManager config) {
        throw new IllegalStateException("Kafka 3.9 cannot enable eligible leader replicas");
    }

    /** AlterPartitionReassignments v1's AllowReplicationFactorChange (KIP-860) does not exist before 4.1: false. */
    static boolean setAllowReplicationFactorChange(org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData req,
                                                   boolean allow) {
        return allow;
    }

    /** No AllowReplicationFactorChange in the response before 4.1. */
    static void putAllowReplicationFactorChange(com.fasterxml.jackson.databind.node.ObjectNode out,
                                                org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData d) {
    }
}
