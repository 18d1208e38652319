/*
 * kreassign's Kafka adapter, layer v4_0: what KreassignAdapter (java/core) calls differently from one Kafka
 * release to another, for Kafka 4.0 and later (the build generates `final class KafkaRelease extends
 * KafkaRelease4_0` for a 4.x release; layers v4_3 and v4_4 only move classes, in their own files).
 *
 * What differs from layer v3_9:
 *  - ZooKeeper is gone: ClusterControlManager.Builder has no setZkMigrationEnabled (nor
 *    ReplicationControlManager's PartitionChangeBuilder a ZooKeeper-migration mode), and --zk-migration is
 *    refused.
 *  - The oldest metadata.version is MetadataVersion.MINIMUM_VERSION, 3.3-IV3 (the older levels, with
 *    MINIMUM_BOOTSTRAP_VERSION and MINIMUM_KRAFT_VERSION, are gone): the adapter's oldest level and a
 *    broker's registered minimum.
 *  - QuorumFeatures.defaultFeatureMap became defaultSupportedFeatureMap.
 *  - QuorumController wires ConfigurationControlManager with the FeatureControlManager (setFeatureControl,
 *    for ELR's ClearElrRecords) and leaves FeatureControlManager's metadata.version to the log's
 *    FeatureLevelRecord (no setMetadataVersion; 4.1 removed the setter).
 *  - ClusterControlManager.BrokerUncleanShutdownHandler became BrokerShutdownHandler(brokerId,
 *    isCleanShutdown, records) -> ReplicationControlManager.handleBrokerShutdown, and registerBroker
 *    takes cleanShutdownDetectionEnabled, which QuorumController.registerBroker sets for a
 *    BrokerRegistration request of v3 or later (every 4.x broker's).
 *  - Broker sessions moved to BrokerHeartbeatTracker, keyed by broker id and epoch:
 *    QuorumController.processBrokerHeartbeat first records the contact time with
 *    ClusterControlManager.trackBrokerHeartbeat; BrokerHeartbeatManager has no findOneStaleBroker, and
 *    ReplicationControlManager.maybeFenceOneStaleBroker returns ControllerResult<Boolean>: true when it
 *    handled an expired session (the periodic task runs it again).
 *  - AlterPartition v0 and v1 are gone (AlterPartitionRequest.json: "Versions 0-1 were removed in Apache
 *    Kafka 4.0"): TopicData has no topicName.
 *  - ELR (KIP-966) is the feature eligible.leader.replicas.version, not a controller config:
 *    ReplicationControlManager.Builder has no setEligibleLeaderReplicasEnabled and asks
 *    FeatureControlManager.isElrFeatureEnabled. Level 1 depends on metadata.version 4.0-IV1
 *    (EligibleLeaderReplicasVersion.ELRV_1.dependencies, checked by Feature.validateVersion); a bootstrap
 *    that enables it also sets the cluster-level min.insync.replicas (ActivationRecordsGenerator).
 * A class named here compiles on every 4.x release: one that a later release moved is named only in its own
 * file (RecordBatches, LogContexts), of which layers v3_9, v4_3 and v4_4 hold one per package.
 * 4.1 and 4.2 need no layer of their own: what changed there is either not called (4.1 removed
 * FeatureControlManager.Builder.setMetadataVersion and ClusterControlManager.Builder.setInterBrokerListenerName;
 * 4.2 changed MetadataVersion.fromVersionString's signature, and the core parses levels itself) or
 * behaviour inside the managers (4.1's ClusterControlManager.activate tracks the sessions of unfenced brokers only).
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

class KafkaRelease4_0 {
    KafkaRelease4_0() { }

    /** The oldest metadata.version this release supports at all. */
    static final MetadataVersion OLDEST_METADATA_VERSION = MetadataVersion.MINIMUM_VERSION;

    /** The oldest metadata.version a broker of this release declares it supports (its registration's range). */
    static final MetadataVersion BROKER_MINIMUM_METADATA_VERSION = MetadataVersion.MINIMUM_VERSION;

    /** No ZooKeeper, no migration mode. */
    static final boolean ZK_MIGRATION = false;

    /** The managers as QuorumController's constructor wires them; ELR follows the finalized feature. */
    static KreassignAdapter.Controller newController(KreassignAdapter.ManualTime time, MetadataVersion mv, boolean zkMigration) {
        var logContext = LogContexts.create();
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
     * AlterPartitionReassignments v1's AllowReplicationFactorChange (KIP-860) came in 4.1, after this class's first
     * release: set it where the release's message class has it (true); false on 4.0, whose request has no such field.
     */
    static boolean setAllowReplicationFactorChange(org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData req,
                                                   boolean allow) {
        try {
            req.getClass().getMethod("setAllowReplicationFactorChange", boolean.class).invoke(req, allow);
            return true;
        } catch (NoSuchMethodException e) {
            return allow;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The response echoes the request's AllowReplicationFactorChange (v1, 4.1+). */
    static void putAllowReplicationFactorChange(com.fasterxml.jackson.databind.node.ObjectNode out,
                                                org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData d) {
        try {
            out.put("allow_replication_factor_change",
                (Boolean) d.getClass().getMethod("allowReplicationFactorChange").invoke(d));
        } catch (NoSuchMethodException e) {
            // 4.0: no such field
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
