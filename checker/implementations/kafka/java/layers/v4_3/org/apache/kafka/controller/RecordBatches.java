/*
 * kreassign's Kafka adapter, layer v4_3: what differs from 4.2 (layers v4_0 and v3_9).
 *  - The record-batch classes the metadata log is written with (MemoryRecords, MemoryRecordsBuilder,
 *    RecordBatch, MutableRecordBatch, Record) moved from org.apache.kafka.common.record to
 *    org.apache.kafka.common.record.internal (only TimestampType stayed).
 * The controller's own wiring is unchanged from 4.0 as far as the adapter goes (4.3 adds cordoned log
 * directories, which need no wiring: a broker with no cordoned directory stays usable, and a heartbeat
 * without cordonedLogDirs changes none): 4.3 takes the class KafkaRelease4_0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;

final class RecordBatches {
    private RecordBatches() { }

    /** A builder of one batch as a __cluster_metadata segment holds it: MemoryRecords, magic 2, uncompressed. */
    static MemoryRecordsBuilder builder(long baseOffset, long timestamp) {
        return MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.MAGIC_VALUE_V2,
            Compression.NONE, TimestampType.CREATE_TIME, baseOffset, timestamp, -1L, (short) -1, -1, false, false, 1);
    }
}
