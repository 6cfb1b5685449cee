\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- queen_ext, the whole current version (default_version in ext/queen_ext.control): the build
-- installs this file as queen_ext--<version>.sql, the one script a fresh CREATE EXTENSION runs.
-- An installed older version gets the same objects from the upgrade scripts
-- (ext/sql/queen_ext--*--*.sql); regress/sql/ext_lifecycle.sql checks that both agree.
--
-- Every function lives in schema queen_ext (docs/extension.md), created here so that it is
-- a member of the extension and DROP EXTENSION queen_ext removes it.

CREATE SCHEMA queen_ext;
COMMENT ON SCHEMA queen_ext IS 'Functions of the queen_ext extension (docs/extension.md).';
-- The functions are safe for every role (dedup_probe checks SELECT on queen.log_dedup).
GRANT USAGE ON SCHEMA queen_ext TO PUBLIC;

-- The segment codec (docs/segment-format.md) in C, raw and zstd.

CREATE FUNCTION queen_ext.segment_pack(created_ats timestamptz[], txids text[],
                                       trace_ids uuid[], producers text[], payloads text[],
                                       codec text DEFAULT 'zstd', level integer DEFAULT 3)
RETURNS bytea
AS 'MODULE_PATHNAME', 'queen_ext_segment_pack'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.segment_pack(timestamptz[], text[], uuid[], text[], text[], text, integer) IS
'Builds a v1 segment, one frame per txid in array order, with codec ''raw'' (byte-identical to queen.segment_pack_raw), ''zstd'' (at level 1..19) or ''auto'' (zstd unless it is not smaller). Arguments as queen.segment_pack_raw, with one created_at per frame. Raises 22023 for bad arguments, 54000 for a segment over 1 GB.';

CREATE FUNCTION queen_ext.segment_decode(body bytea, base_offset bigint DEFAULT 0,
                                         from_offset bigint DEFAULT NULL,
                                         to_offset bigint DEFAULT NULL)
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz, transaction_id text,
              trace_id uuid, producer_sub text, payload text)
AS 'MODULE_PATHNAME', 'queen_ext_segment_decode'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.segment_decode(bytea, bigint, bigint, bigint) IS
'The frames of a raw or zstd v1 segment, idx 0-based, msg_offset = base_offset + idx, only those with from_offset <= msg_offset <= to_offset (NULL bounds are open); the whole segment is checked. A NULL body gives no rows. A corrupt segment raises XX001 (message "segment: ..."), invalid UTF-8 22021.';

CREATE FUNCTION queen_ext.segment_header(body bytea, OUT codec text, OUT frame_count integer,
                                         OUT raw_length bigint, OUT stored_length integer)
AS 'MODULE_PATHNAME', 'queen_ext_segment_header'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.segment_header(bytea) IS
'Checked header of a v1 segment: codec (''raw''/''zstd''), frame_count, raw_length, and stored_length (the segment''s size in bytes). Raises XX001 like queen.segment_header. Reads only the first 16 bytes.';

-- Batched dedup probes of queen.log_dedup: one partition, and many in one call (a fused
-- push touches many).

CREATE FUNCTION queen_ext.dedup_probe(partition_id bigint, txids text[])
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_dedup_probe'
LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 10;

COMMENT ON FUNCTION queen_ext.dedup_probe(bigint, text[]) IS
'For each 1-based position idx of txids whose transaction id has a queen.log_dedup row in partition_id, that row''s msg_offset and created_at (NULL elements are skipped, repeated ids give one row per position). B-tree probes of the (partition_id, transaction_id) key. Raises 42P01 without the broker schema, 42501 without SELECT on queen.log_dedup.';

CREATE FUNCTION queen_ext.dedup_probe(partition_ids bigint[], txids text[])
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_dedup_probe_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 10;

COMMENT ON FUNCTION queen_ext.dedup_probe(bigint[], text[]) IS
'For each 1-based position idx whose (partition_ids[idx], txids[idx]) has a queen.log_dedup row, that row''s msg_offset and created_at (a NULL in either array gives no row). One call probes a whole fused push. B-tree probes of the (partition_id, transaction_id) key. Raises 22023 when the arrays differ in length, 42P01 without the broker schema, 42501 without SELECT on queen.log_dedup.';

CREATE FUNCTION queen_ext.version()
RETURNS text
AS 'MODULE_PATHNAME', 'queen_ext_version'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.version() IS
'The library''s version, segment format version and zstd version, e.g. "queen_ext 1.1 (segment format 1, zstd 1.5.4)".';

-- The fused push in C: queen.push's contract (sql/procedures/40_push.sql), which calls it
-- when it is installed.

CREATE FUNCTION queen_ext.push(queues text[], partitions text[], counts integer[],
                               txids text[], trace_ids uuid[], producers text[], payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint,
              created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_push'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.push(text[], text[], integer[], text[], uuid[], text[], text[]) IS
'The fused push of queen.push in C, under its contract: stores the items (counts[k] items for (queues[k], partitions[k])) with exact dedup, one zstd or raw segment per partition, and returns one row per item: queued with its offset and createdAt, or duplicate with the original''s offset. Locks, errors and rows as queen.push.';

-- queen.ack_completed in C: queen.ack_completed (sql/procedures/61_ack_completed.sql) calls it
-- when it is installed.

CREATE FUNCTION queen_ext.ack_completed(consumer_group text, partition_ids bigint[], txids text[],
                                        offsets bigint[], lease_ids uuid[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
AS 'MODULE_PATHNAME', 'queen_ext_ack_completed'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.ack_completed(text, bigint[], text[], bigint[], uuid[]) IS
'queen.ack_completed in C, under its contract: a call of completions moves each of the group''s cursors to the highest acked offset of its live span (acks by transaction id resolved by direct dedup probes) and returns one row per ack. Locks, errors and rows as queen.ack_completed.';

-- queen.ack_fused in C: queen.ack_fused (sql/procedures/63_ack_fused.sql) calls it when it is
-- installed.

CREATE FUNCTION queen_ext.ack_fused(consumer_group text, requests integer[], partition_ids bigint[],
                                    txids text[], offsets bigint[], lease_ids uuid[],
                                    statuses text[], errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
AS 'MODULE_PATHNAME', 'queen_ext_ack_fused'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.ack_fused(text, integer[], bigint[], text[], bigint[], uuid[], text[], text[]) IS
'queen.ack_fused in C, under its contract: applies the acks of several requests of a group together (one queen.ack call); a request whose cursors are busy or shared with an earlier request gets no row.';

-- queen.pop_fused in C: queen.pop_fused (sql/procedures/56_pop_fused.sql) and queen.pop's
-- queue-wide pops (55_pop.sql) call it when it is installed. Its settings are queen.pop_fused's
-- (docs/architecture.md, "Plans that stay right"): its kept plans are planned under them.

CREATE FUNCTION queen_ext.pop_fused(queue text, consumer_group text, batches integer[],
                                    max_partitions integer[], auto_ack boolean,
                                    subscribe_all boolean, subscription_at timestamptz)
RETURNS TABLE(request integer, partition_id bigint, partition_name text, lease_id uuid,
              span_start bigint, span_end bigint, seg_first bigint, seg_codec smallint,
              seg_body bytea, skip_offsets bigint[], leases_expired integer, redelivered bigint,
              lease_dead_letters integer, expired_dead_letters bigint)
AS 'MODULE_PATHNAME', 'queen_ext_pop_fused'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100
SET enable_seqscan = off
SET jit = off
SET enable_sort = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan;

COMMENT ON FUNCTION queen_ext.pop_fused(text, text, integer[], integer[], boolean, boolean, timestamptz) IS
'queen.pop_fused in C, under its contract: several queue-wide pops of one group in one call, one claim walk handing cursors to the requests in claim order, each request with its own lease; segments read by direct probes of their key. Claims that need a rule applied cursor by cursor run queen.pop_stepwise per request, as the stock path does.';
