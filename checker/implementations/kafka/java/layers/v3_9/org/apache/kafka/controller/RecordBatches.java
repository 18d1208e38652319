/*
 * kreassign's Kafka adapter, layer v3_9 (used up to 4.2): the record-batch classes the metadata log is written
 * with, in org.apache.kafka.common.record (layer v4_3 has them from their new package). The only file naming
 * them: KreassignAdapter.dumpBatch reads the builder's batches and records through `var`.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;

import java.nio.ByteBuffer;

final class RecordBatches {
    private RecordBatches() { }

    /** A builder of one batch as a __cluster_metadata segment holds it: MemoryRecords, magic 2, uncompressed. */
    static MemoryRecordsBuilder builder(long baseOffset, long timestamp) {
        return MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.MAGIC_VALUE_V2,
            Compression.NONE, TimestampType.CREATE_TIME, baseOffset, timestamp, -1L, (short) -1, -1, false, false, 1);
    }
}
