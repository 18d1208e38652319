/*
 * kreassign's Kafka adapter, layer v4_4: what differs from 4.3 (layers v4_3, v4_0 and v3_9).
 *  - LogContext, which the managers' builders and SnapshotRegistry take, moved from
 *    org.apache.kafka.common.utils to org.apache.kafka.common.utils.internals (so did AppInfoParser, which
 *    the core does without).
 * The controller's own wiring is unchanged from 4.3 as far as the adapter goes (4.4 adds controller
 * unregistration and checks a CreatePartitions' total count in ReplicationControlManager itself).
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.utils.internals.LogContext;

final class LogContexts {
    private LogContexts() { }

    static LogContext create() {
        return new LogContext();
    }
}
