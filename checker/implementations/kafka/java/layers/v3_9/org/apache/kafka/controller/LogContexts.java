/*
 * kreassign's Kafka adapter, layer v3_9 (used up to 4.3): LogContext, which SnapshotRegistry and the managers'
 * builders take, in org.apache.kafka.common.utils (layer v4_4 has it from its new package). The only file
 * naming it: the layers hold the one they create in a `var`.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.utils.LogContext;

final class LogContexts {
    private LogContexts() { }

    static LogContext create() {
        return new LogContext();
    }
}
