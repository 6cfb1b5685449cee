\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- 1.4: the pop claim and its segment read in C: queen_ext.pop_fused

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
