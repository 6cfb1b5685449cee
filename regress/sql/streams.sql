-- Streams (sql/procedures/97_streams.sql; the contract: docs/streams.md):
-- queen.stream_register, queen.stream_state_get and queen.stream_cycle called directly, as the
-- broker calls them. A flat checklist: registration, the state reads, the cycle (state ops,
-- sink pushes, the source ack, all or nothing) and the kept lease, whose expiry counts no
-- attempt.
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT queue_id > 0 AS created FROM queen.configure('st_src', NULL, NULL, '{"leaseTime": 300, "retryLimit": 3}');
SELECT queue_id > 0 AS created FROM queen.configure('st_sink', NULL, NULL, NULL);
-- p1: m1..m8, p2: n1..n2 (one segment each)
SELECT count(*) AS pushed FROM queen.push(ARRAY['st_src', 'st_src'], ARRAY['p1', 'p2'], ARRAY[8, 2],
    ARRAY['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'n1', 'n2'],
    array_fill(NULL::uuid, ARRAY[10]), array_fill(NULL::text, ARRAY[10]),
    ARRAY['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);

-- The id of a partition of a queue.
CREATE FUNCTION pg_temp.pid(q text, part text) RETURNS bigint LANGUAGE sql AS $$
    SELECT p.id FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id
     WHERE qu.name = q AND p.name = part
$$;
SELECT pg_temp.pid('st_src', 'p1') AS p1, pg_temp.pid('st_src', 'p2') AS p2,
       pg_temp.pid('st_sink', 'Default') AS sink_default \gset

-- One cycle, as the broker calls queen.stream_cycle. ops: [[type, key, value?], ...]. items:
-- [[queue, partition, transactionId or null, payload, derive position or null], ...], grouped
-- by (queue, partition) as the broker groups them; an item without a transaction id gets a
-- placeholder (gen-<position>), which the cycle replaces when it derives one. The answer as
-- the cycle gives it, less what a run cannot repeat: a push element shows no partition id,
-- and its transaction_id is 'derived' when it is md5(query/partition/acked offset/position)
-- as a uuid; partition ids in an error read <pid>.
CREATE FUNCTION pg_temp.cycle(qid uuid, pid bigint, ops jsonb DEFAULT '[]', items jsonb DEFAULT '[]',
                              ack_tx text DEFAULT NULL, ack_lease uuid DEFAULT NULL,
                              ack_status text DEFAULT 'completed', release boolean DEFAULT true,
                              ack_offset bigint DEFAULT NULL, ack_error text DEFAULT NULL, grp text DEFAULT 'g')
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
    k_q text[]; k_p text[]; k_n int[];
BEGIN
    SELECT array_agg(g.q ORDER BY g.first), array_agg(g.p ORDER BY g.first), array_agg(g.n ORDER BY g.first)
      INTO k_q, k_p, k_n
      FROM (SELECT e->>0 AS q, e->>1 AS p, min(o) AS first, count(*)::int AS n
              FROM jsonb_array_elements(items) WITH ORDINALITY AS x(e, o) GROUP BY 1, 2) g;
    r := queen.stream_cycle(qid, pid, grp,
        ARRAY(SELECT e->>0 FROM jsonb_array_elements(ops) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT e->>1 FROM jsonb_array_elements(ops) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT e->2 FROM jsonb_array_elements(ops) WITH ORDINALITY x(e, o) ORDER BY o),
        coalesce(k_q, '{}'), coalesce(k_p, '{}'), coalesce(k_n, '{}'),
        ARRAY(SELECT coalesce(e->>2, 'gen-' || (o - 1)) FROM jsonb_array_elements(items) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT NULL::uuid FROM jsonb_array_elements(items) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT 'sub-' || grp FROM jsonb_array_elements(items) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT (e->3)::text FROM jsonb_array_elements(items) WITH ORDINALITY x(e, o) ORDER BY o),
        ARRAY(SELECT (e->>4)::int FROM jsonb_array_elements(items) WITH ORDINALITY x(e, o) ORDER BY o),
        ack_tx, ack_offset, ack_lease, CASE WHEN ack_tx IS NOT NULL THEN ack_status END, ack_error, release);
    RETURN r - 'push' - 'error'
        || jsonb_build_object('push', coalesce((
               SELECT jsonb_agg(e - 'partition_id' - 'transaction_id' || jsonb_build_object('transaction_id',
                          CASE WHEN e->>'transaction_id' = md5(format('%s/%s/%s/%s', qid, pid, r->'ack'->>'offset',
                                                                     items->((e->>'item')::int - 1)->>4))::uuid::text
                               THEN 'derived' ELSE e->>'transaction_id' END) ORDER BY o)
                 FROM jsonb_array_elements(r->'push') WITH ORDINALITY x(e, o)), '[]'))
        || CASE WHEN r ? 'error' THEN jsonb_build_object('error', regexp_replace(r->>'error', 'partition \d+',
                                                                                  'partition <pid>', 'g'))
                ELSE '{}' END;
END $$;

-- The newest version of a group's cursor on a partition, without ids or times.
CREATE FUNCTION pg_temp.cursor(pid bigint, grp text DEFAULT 'g')
RETURNS TABLE(committed bigint, lease_end bigint, leased boolean, lease_live boolean, lease_counted boolean,
              attempts int)
LANGUAGE sql AS $$
    SELECT lc.committed, lc.lease_end, lc.lease_id IS NOT NULL, coalesce(lc.lease_expires_at > now(), false),
           lc.lease_counted, lc.attempts
      FROM queen.log_consumers lc WHERE lc.partition_id = pid AND lc.consumer_group = grp
     ORDER BY lc.version DESC LIMIT 1
$$;
-- The live lease of a group's cursor.
CREATE FUNCTION pg_temp.lease(pid bigint, grp text DEFAULT 'g') RETURNS uuid LANGUAGE sql AS $$
    SELECT lc.lease_id FROM queen.log_consumers lc WHERE lc.partition_id = pid AND lc.consumer_group = grp
     ORDER BY lc.version DESC LIMIT 1
$$;
-- A lease that expired unreleased (as if leaseTime had passed).
CREATE FUNCTION pg_temp.expire(pid bigint, grp text DEFAULT 'g') RETURNS void LANGUAGE sql AS $$
    UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
     WHERE partition_id = pid AND consumer_group = grp AND lease_id IS NOT NULL
$$;
-- What a cycle may touch, in one text: the state rows (every version) and lanes of every
-- query, the sink's messages, the source's cursors (committed, lease, counted, attempts) and
-- the dead letters. Equal before and after a failed cycle: nothing was applied.
CREATE FUNCTION pg_temp.fingerprint() RETURNS text LANGUAGE sql AS $$
    SELECT concat_ws(E'\n',
        (SELECT string_agg(format('%s/%s/%s/%s=%s', sq.name, s.partition_id, s.key, s.version, s.value), ','
                           ORDER BY sq.name, s.partition_id, s.key, s.version)
           FROM queen.stream_state s JOIN queen.stream_queries sq ON sq.id = s.query_id),
        (SELECT string_agg(format('%s/%s', sq.name, l.partition_id), ',' ORDER BY sq.name, l.partition_id)
           FROM queen.stream_lanes l JOIN queen.stream_queries sq ON sq.id = l.query_id),
        (SELECT string_agg(format('%s/%s/%s/%s=%s', m.queue, m.partition, m."offset", m.transaction_id, m.payload_text), ','
                           ORDER BY m.queue, m.partition, m."offset")
           FROM queen.messages m WHERE m.queue LIKE 'st\_%' AND m.queue <> 'st_src'),
        (SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s/%s', lc.partition_id, lc.consumer_group, lc.committed,
                                  lc.lease_id, lc.lease_end, lc.lease_expires_at, lc.lease_counted, lc.attempts), ','
                           ORDER BY lc.partition_id, lc.consumer_group)
           FROM queen.log_consumers lc JOIN queen.queues qu ON qu.id = lc.queue_id WHERE qu.name LIKE 'st\_%'),
        (SELECT string_agg(format('%s/%s/%s/%s/%s', d.partition_id, d.msg_offset, d.consumer_group, d.reason,
                                  d.error_message), ',' ORDER BY d.id)
           FROM queen.dead_letters d JOIN queen.queues qu ON qu.id = d.queue_id WHERE qu.name LIKE 'st\_%'))
$$;
-- The counts behind the fingerprint.
CREATE VIEW pg_temp.st_counts AS
SELECT (SELECT count(*) FROM queen.stream_state) AS state_rows,
       (SELECT count(*) FROM queen.stream_lanes) AS lanes,
       (SELECT count(*) FROM queen.messages WHERE queue = 'st_sink') AS sink_messages,
       (SELECT count(*) FROM queen.messages WHERE queue = 'st_full') AS full_messages,
       (SELECT count(*) FROM queen.dead_letters d JOIN queen.queues qu ON qu.id = d.queue_id
         WHERE qu.name LIKE 'st\_%') AS dead_letters;

-- ---------------------------------------------------------------------------------------------
-- Registration
-- ---------------------------------------------------------------------------------------------
-- new: created, fresh
SELECT query_id AS q1, fresh, reset, conflict FROM queen.stream_register('st.count', 'st_src', NULL, 'h1') \gset
SELECT :'fresh' AS fresh, :'reset' AS reset, :'conflict' AS conflict;
SELECT name, source_queue, sink_queue, config_hash FROM queen.stream_queries WHERE id = :'q1';
-- same hash: not fresh, the same id, source and sink updated
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_src2', 'st_sink', 'h1');
SELECT name, source_queue, sink_queue, config_hash FROM queen.stream_queries WHERE id = :'q1';
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_src', 'st_sink', 'h1');
SELECT name, source_queue, sink_queue, config_hash FROM queen.stream_queries WHERE id = :'q1';
-- another hash without reset: a conflict, nothing changes (not even source and sink)
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_other', NULL, 'h2');
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_other', NULL, 'h2', false);
SELECT name, source_queue, sink_queue, config_hash FROM queen.stream_queries WHERE id = :'q1';
-- a second query, for the state reads
SELECT query_id AS q2 FROM queen.stream_register('st.keys', 'st_src', NULL, 'k1') \gset
SELECT :'q2' <> :'q1' AS own_id;

-- ---------------------------------------------------------------------------------------------
-- State reads (queen.stream_state_get)
-- ---------------------------------------------------------------------------------------------
SELECT pg_temp.cycle(:'q2', :p1, '[["upsert", "a", 1], ["upsert", "B", 2], ["upsert", "ä", 3], ["upsert", "a:1", 4],
                                   ["upsert", "b", 5], ["upsert", "w:1", {"windowEnd": 100}],
                                   ["upsert", "w:2", {"windowEnd": 200, "n": 2}], ["upsert", "w:3", {"windowEnd": 150.5}],
                                   ["upsert", "w:s", {"windowEnd": "100"}], ["upsert", "w:x", {"windowStart": 1}],
                                   ["upsert", "w:z", {"windowEnd": null}], ["upsert", "w:0", [100]]]') AS cycle;
SELECT pg_temp.cycle(:'q2', :p2, '[["upsert", "a", "p2"], ["upsert", "w:1", {"windowEnd": 1}]]') AS cycle;
-- every key, sorted by key in byte order
SELECT key, value FROM queen.stream_state_get(:'q2', :p1);
SELECT key, value FROM queen.stream_state_get(:'q2', :p1, '{}');
-- listed keys: missing ones and duplicates give nothing more, sorted by key
SELECT key, value FROM queen.stream_state_get(:'q2', :p1, ARRAY['ä', 'a', 'missing', 'a', 'B', 'ä']);
SELECT key, value FROM queen.stream_state_get(:'q2', :p1, ARRAY['missing']);
-- key_prefix: the keys that start with it
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, 'a');
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, 'w:');
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, 'A');
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, 'ä');
SELECT count(*) AS all_keys FROM queen.stream_state_get(:'q2', :p1, NULL, '');
SELECT count(*) AS literal_prefix FROM queen.stream_state_get(:'q2', :p1, NULL, '%');
-- ripe_at_or_before: rows whose value.windowEnd is a number at or before it
SELECT key, value FROM queen.stream_state_get(:'q2', :p1, NULL, NULL, 150);
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, NULL, 150.5);
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, NULL, 1e6);
SELECT count(*) AS ripe_at_99 FROM queen.stream_state_get(:'q2', :p1, NULL, NULL, 99);
SELECT count(*) AS ripe_at_100 FROM queen.stream_state_get(:'q2', :p1, NULL, NULL, 100);
-- the filters combined (AND)
SELECT key FROM queen.stream_state_get(:'q2', :p1, ARRAY['w:1', 'w:2', 'w:s', 'a', 'w:3'], 'w:', 160);
SELECT key FROM queen.stream_state_get(:'q2', :p1, ARRAY['w:1', 'w:2', 'a'], 'a');
SELECT key FROM queen.stream_state_get(:'q2', :p1, NULL, 'w:', 150.5);
SELECT key FROM queen.stream_state_get(:'q2', :p1, ARRAY['a', 'b'], NULL, 1e6);
-- the answer limits: rows and bytes of keys and values (value as JSON text), counted first
SELECT queen.stream_state_max_rows() AS max_rows, queen.stream_state_max_bytes() AS max_bytes;
SELECT * FROM queen.stream_state_size(:'q2', :p1);
SELECT * FROM queen.stream_state_size(:'q2', :p1, ARRAY['b', 'a:1', 'ä', 'B']);
SELECT * FROM queen.stream_state_size(:'q2', :p1, NULL, 'w:', 1e6);
-- a lane past them (written through SQL) is refused whole (QN413), answered by prefix
INSERT INTO queen.stream_state (query_id, partition_id, key, version, value)
SELECT :'q2', -1, format('k%s', lpad(i::text, 5, '0')), nextval('queen.stream_state_version'), to_jsonb(i)
  FROM generate_series(1, queen.stream_state_max_rows() + 1) i;
SELECT state_rows, state_bytes FROM queen.stream_state_size(:'q2', -1);
SELECT count(*) FROM queen.stream_state_get(:'q2', -1);
SELECT count(*) FROM queen.stream_state_get(:'q2', -1, NULL, 'k0000');
UPDATE queen.stream_state SET value = to_jsonb(repeat('x', 16777216)) WHERE query_id = :'q2' AND partition_id = -1 AND key = 'k00001';
SELECT count(*) FROM queen.stream_state_get(:'q2', -1, NULL, 'k0000');
SELECT count(*) FROM queen.stream_state_get(:'q2', -1, NULL, 'k0001');
DELETE FROM queen.stream_state WHERE query_id = :'q2' AND partition_id = -1;
-- each lane has its own state
SELECT key, value FROM queen.stream_state_get(:'q2', :p2);
-- unknown query or partition: no rows
SELECT count(*) AS unknown_query FROM queen.stream_state_get('00000000-0000-0000-0000-000000000001', :p1);
SELECT count(*) AS unknown_partition FROM queen.stream_state_get(:'q2', -1);
SELECT count(*) AS no_lane FROM queen.stream_state_get(:'q1', :p1);
SELECT count(*) AS unknown_query_keys FROM queen.stream_state_get('00000000-0000-0000-0000-000000000001', :p1, ARRAY['a']);

-- ---------------------------------------------------------------------------------------------
-- The cycle (queen.stream_cycle)
-- ---------------------------------------------------------------------------------------------
-- p1 popped by group g: (0,2]
SELECT count(*) > 0 AS popped FROM queen.pop('st_src', 'p1', 'g', 2, 1, false, true, NULL);
SELECT * FROM pg_temp.cursor(:p1);
SELECT pg_temp.lease(:p1) AS lease1 \gset
-- state ops in order (the same key twice; deleting a missing key is fine), sink pushes with
-- dedup (s1 twice in the call), the ack of m1 through the live lease, which is then released
SELECT pg_temp.cycle(:'q1', :p1,
    '[["upsert", "x", {"v": 1}], ["upsert", "y", "first"], ["upsert", "x", {"v": 2}], ["delete", "ghost"],
      ["delete", "y"], ["upsert", "y", "second"]]',
    '[["st_sink", "k1", "s1", {"n": 1}], ["st_sink", "k1", "s2", {"n": 2}], ["st_sink", "k1", "s1", {"n": 3}],
      ["st_sink", "k2", "s1", {"n": 4}]]',
    ack_tx => 'm1', ack_lease => :'lease1') AS cycle;
SELECT key, value FROM queen.stream_state_get(:'q1', :p1);
SELECT key, count(*) AS versions FROM queen.stream_state WHERE query_id = :'q1' GROUP BY key ORDER BY key;
SELECT partition, "offset", transaction_id, payload, producer_sub FROM queen.messages
 WHERE queue = 'st_sink' ORDER BY partition, "offset";
-- m1 committed, the lease released: m2 is claimable at once, no attempt counted
SELECT * FROM pg_temp.cursor(:p1);
SELECT partition_name, span_start, span_end, leases_expired FROM queen.pop('st_src', 'p1', 'g', 1, 1, false, true, NULL);
SELECT * FROM pg_temp.cursor(:p1);
-- the same sink item again (a duplicate, not a failure) and an ack of m2 by its offset, naming
-- no lease (the live one)
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "x", {"v": 3}]]', '[["st_sink", "k1", "s2", {"n": 5}]]',
                     ack_tx => 'm2', ack_offset => 2) AS cycle;
SELECT count(*) AS sink_messages FROM queen.messages WHERE queue = 'st_sink';
SELECT * FROM pg_temp.cursor(:p1);
-- a cycle of state ops alone; no ack, no push
SELECT pg_temp.cycle(:'q1', :p1, '[["delete", "y"], ["upsert", "z", true]]') AS cycle;
SELECT pg_temp.cycle(:'q1', :p1) AS empty_cycle;
-- many updates of the same keys leave one version row per live key
SELECT count(*) AS cycles FROM generate_series(1, 30) i,
       LATERAL pg_temp.cycle(:'q1', :p1, jsonb_build_array(jsonb_build_array('upsert', 'x', jsonb_build_object('v', i)),
                                                          jsonb_build_array('upsert', 'c' || (i % 3), i),
                                                          jsonb_build_array('delete', 'z'),
                                                          jsonb_build_array('upsert', 'z', i))) c
 WHERE (c->>'success')::boolean AND (c->>'state_ops_applied')::int = 4;
SELECT key, value FROM queen.stream_state_get(:'q1', :p1);
SELECT count(*) AS state_rows, count(DISTINCT key) AS live_keys
  FROM queen.stream_state WHERE query_id = :'q1' AND partition_id = :p1;

-- the kept lease: p1 popped (2,5]; a cycle acks m3, a prefix, with release_lease false
SELECT partition_name, span_start, span_end FROM queen.pop('st_src', 'p1', 'g', 3, 1, false, true, NULL);
SELECT pg_temp.lease(:p1) AS lease3 \gset
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "kept", 1]]', ack_tx => 'm3', ack_lease => :'lease3',
                     release => false) AS cycle;
SELECT *, pg_temp.lease(:p1) = :'lease3' AS same_lease FROM pg_temp.cursor(:p1);
-- a later cycle under the kept lease, still kept: m4
SELECT pg_temp.cycle(:'q1', :p1, ack_tx => 'm4', ack_lease => :'lease3', release => false) AS cycle;
SELECT *, pg_temp.lease(:p1) = :'lease3' AS same_lease FROM pg_temp.cursor(:p1);
-- an ack that reaches the span's end releases the lease even with release_lease false
SELECT pg_temp.cycle(:'q1', :p1, ack_tx => 'm5', ack_lease => :'lease3', release => false) AS cycle;
SELECT * FROM pg_temp.cursor(:p1);

-- derived transaction ids: a sink item without one, in a cycle with an ack, gets
-- md5(query/partition/acked offset/position) as a uuid. p1 popped (5,8]; a cycle acks m6,
-- keeps the lease and pushes a derived item; run again after it committed (a lost answer),
-- its ack is a noop: a replay, of which nothing is applied (applied false, no push)
SELECT partition_name, span_start, span_end FROM queen.pop('st_src', 'p1', 'g', 3, 1, false, true, NULL);
SELECT pg_temp.lease(:p1) AS lease4 \gset
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "last", 6]]',
                     '[["st_sink", "k3", "own", {"n": 6}], ["st_sink", "k3", null, {"n": 7}, 1]]',
                     ack_tx => 'm6', ack_lease => :'lease4', release => false) AS cycle;
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "last", 6]]',
                     '[["st_sink", "k3", "own", {"n": 6}], ["st_sink", "k3", null, {"n": 7}, 1]]',
                     ack_tx => 'm6', ack_lease => :'lease4', release => false) AS retried;
SELECT partition, "offset", transaction_id = md5(format('%s/%s/%s/%s', :'q1', :p1, 6, 1))::uuid::text AS derived,
       payload FROM queen.messages WHERE queue = 'st_sink' AND partition = 'k3' ORDER BY "offset";
SELECT *, pg_temp.lease(:p1) = :'lease4' AS same_lease FROM pg_temp.cursor(:p1);

-- a 'dlq' ack of m7 under that lease (release_lease false): m7 dead-lettered with its error,
-- the cursor onto it, the lease released all the same
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "failed", "m7"]]', ack_tx => 'm7', ack_lease => :'lease4',
                     ack_status => 'dlq', ack_error => 'bad input', release => false) AS cycle;
SELECT * FROM pg_temp.cursor(:p1);
SELECT p.name AS partition, d.msg_offset, d.consumer_group, d.transaction_id, d.reason, d.error_message, d.attempts
  FROM queen.dead_letters d JOIN queen.log_partitions p ON p.id = d.partition_id WHERE p.id = :p1;
-- m8 is claimable at once
SELECT partition_name, span_start, span_end, leases_expired FROM queen.pop('st_src', 'p1', 'g', 3, 1, false, true, NULL);
SELECT pg_temp.lease(:p1) AS lease5 \gset

-- m8 acked with a derived item: the ack reaches the span's end, so the lease is released. A
-- retry naming that lease fails with nothing applied; one without a lease is a replay, nothing
-- applied either
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "last", 8]]', '[["st_sink", "k3", null, {"n": 8}, 0]]',
                     ack_tx => 'm8', ack_lease => :'lease5') AS cycle;
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "last", 8]]', '[["st_sink", "k3", null, {"n": 8}, 0]]',
                     ack_tx => 'm8', ack_lease => :'lease5') AS retried;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "last", 8]]', '[["st_sink", "k3", null, {"n": 8}, 0]]',
                     ack_tx => 'm8') AS retried;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT partition, "offset", transaction_id IN (md5(format('%s/%s/%s/%s', :'q1', :p1, 6, 1))::uuid::text,
                                              md5(format('%s/%s/%s/%s', :'q1', :p1, 8, 0))::uuid::text) AS derived,
       payload FROM queen.messages WHERE queue = 'st_sink' AND partition = 'k3' ORDER BY "offset";
-- without an ack nothing is derived: the item keeps the transaction id it was given
SELECT pg_temp.cycle(:'q1', :p1, items => '[["st_sink", "k3", null, {"n": 9}, 0]]') AS cycle;
SELECT count(*) AS k3_messages FROM queen.messages WHERE queue = 'st_sink' AND partition = 'k3';
SELECT * FROM pg_temp.cursor(:p1);

-- ---------------------------------------------------------------------------------------------
-- Failures: success false, the error, and nothing applied (state, lanes, sink, cursors, dead
-- letters as before). Each failing cycle carries state ops and pushes that would apply.
-- ---------------------------------------------------------------------------------------------
SELECT count(*) > 0 AS popped FROM queen.pop('st_src', 'p2', 'g', 1, 1, false, true, NULL);
SELECT pg_temp.lease(:p2) AS lease_p2 \gset
SELECT * FROM pg_temp.st_counts;
SELECT pg_temp.fingerprint() AS before \gset
-- an unknown query
SELECT pg_temp.cycle('00000000-0000-0000-0000-000000000001', :p2, '[["upsert", "f", 1]]',
                     '[["st_sink", "f", "f1", 1]]', ack_tx => 'n1', ack_lease => :'lease_p2') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- a partition that is not one of the source queue (the sink's; an unknown id)
SELECT pg_temp.cycle(:'q1', :sink_default, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]') AS cycle;
SELECT pg_temp.cycle(:'q1', -1, '[["upsert", "f", 1]]') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- a bad state op after good ones (on a lane that does not exist yet: no lane is left behind):
-- an unknown type, an upsert without a value, a delete without a key, an op without a type
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1], ["delete", "x"], ["merge", "f", 2]]',
                     '[["st_sink", "f", "f1", 1]]', ack_tx => 'n1', ack_lease => :'lease_p2') AS cycle;
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "x", 0], ["upsert", "f"]]') AS cycle;
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "x", 0], ["delete", null]]') AS cycle;
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "x", 0], [null, "x"]]') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- a lease that is not live: an unknown one, and an expired one (p2's lease made expired)
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n1', ack_lease => '00000000-0000-0000-0000-00000000000a') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
 WHERE partition_id = :p2 AND consumer_group = 'g';
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2') AS cycle;
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2', ack_offset => 1) AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
UPDATE queen.log_consumers SET lease_expires_at = now() + interval '300 seconds'
 WHERE partition_id = :p2 AND consumer_group = 'g';
SELECT * FROM pg_temp.cursor(:p2);
SELECT pg_temp.fingerprint() AS before \gset
-- an ack of a message outside the span (0,1]: by transaction id, by offset, an unknown id,
-- and a group without a cursor
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n2', ack_lease => :'lease_p2') AS cycle;
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n2', ack_lease => :'lease_p2', ack_offset => 2) AS cycle;
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'nope', ack_lease => :'lease_p2') AS cycle;
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', ack_tx => 'n1', grp => 'other') AS cycle;
-- a 'dlq' ack of a committed message (m1 on p1)
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "f", 1]]', ack_tx => 'm1', ack_offset => 1, ack_status => 'dlq',
                     ack_error => 'late') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- a sink queue over maxSize (st_full holds 2 unconsumed messages, maxSize 2)
SELECT queue_id > 0 AS created FROM queen.configure('st_full', NULL, NULL, '{"maxSize": 2}');
SELECT count(*) AS pushed FROM queen.push(ARRAY['st_full'], ARRAY['Default'], ARRAY[2], ARRAY['u1', 'u2'],
    ARRAY[NULL, NULL]::uuid[], ARRAY[NULL, NULL]::text[], ARRAY['1', '2']);
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1], ["st_full", "Default", "u3", 3]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2') AS cycle;
-- the same with the lease kept (it would be marked counted), and with a 'dlq' ack (it would
-- dead-letter n1)
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_full", "Default", "u3", 3]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2', release => false) AS cycle;
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_full", "Default", "u3", 3]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2', ack_status => 'dlq', ack_error => 'x') AS cycle;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT * FROM pg_temp.st_counts;
SELECT * FROM pg_temp.cursor(:p2);
-- an ack status other than completed or dlq is refused (the broker sends only these two)
SELECT pg_temp.cycle(:'q1', :p2, ack_tx => 'n1', ack_status => 'failed') AS cycle;
-- the same cycle as the first failures, now valid: it applies
SELECT pg_temp.cycle(:'q1', :p2, '[["upsert", "f", 1]]', '[["st_sink", "f", "f1", 1]]',
                     ack_tx => 'n1', ack_lease => :'lease_p2') AS cycle;
SELECT * FROM pg_temp.st_counts;
SELECT * FROM pg_temp.cursor(:p2);

-- ---------------------------------------------------------------------------------------------
-- Registration again: another hash with reset drops the query's state and lanes, and only its
-- ---------------------------------------------------------------------------------------------
SELECT sq.name, count(DISTINCT l.partition_id) AS lanes, (SELECT count(*) FROM queen.stream_state s WHERE s.query_id = sq.id) AS state_rows
  FROM queen.stream_queries sq LEFT JOIN queen.stream_lanes l ON l.query_id = sq.id
 WHERE sq.name LIKE 'st.%' GROUP BY sq.id, sq.name ORDER BY sq.name;
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_src', 'st_sink', 'h2', true);
SELECT name, source_queue, sink_queue, config_hash FROM queen.stream_queries WHERE id = :'q1';
SELECT sq.name, count(DISTINCT l.partition_id) AS lanes, (SELECT count(*) FROM queen.stream_state s WHERE s.query_id = sq.id) AS state_rows
  FROM queen.stream_queries sq LEFT JOIN queen.stream_lanes l ON l.query_id = sq.id
 WHERE sq.name LIKE 'st.%' GROUP BY sq.id, sq.name ORDER BY sq.name;
-- the sink and the cursors are not the query's state: they stay
SELECT count(*) AS sink_messages FROM queen.messages WHERE queue = 'st_sink';
-- reset with the hash now stored: nothing to reset
SELECT query_id = :'q1' AS same_id, fresh, reset, conflict
  FROM queen.stream_register('st.count', 'st_src', 'st_sink', 'h2', true);
-- the query works on after the reset: a new lane
SELECT pg_temp.cycle(:'q1', :p1, '[["upsert", "x", "again"]]') AS cycle;
SELECT key, value FROM queen.stream_state_get(:'q1', :p1);

-- ---------------------------------------------------------------------------------------------
-- The kept lease's expiry counts no attempt (retryLimit 0: one counted attempt dead-letters the
-- head). k1: a cycle commits a prefix and keeps the lease; the lease expires; a pop takes the
-- partition over: the tail is redelivered, attempts stay 0, no dead letter, several times in
-- a row, by a pop of the partition and by a queue-wide pop. k2: a lease that expires without
-- a kept-lease cycle counts an attempt and dead-letters its head (lease_expired).
-- ---------------------------------------------------------------------------------------------
SELECT queue_id > 0 AS created FROM queen.configure('st_kept', NULL, NULL, '{"leaseTime": 300, "retryLimit": 0}');
SELECT count(*) AS pushed FROM queen.push(ARRAY['st_kept'], ARRAY['k1'], ARRAY[4], ARRAY['a1', 'a2', 'a3', 'a4'],
    array_fill(NULL::uuid, ARRAY[4]), array_fill(NULL::text, ARRAY[4]), ARRAY['1', '2', '3', '4']);
SELECT pg_temp.pid('st_kept', 'k1') AS k1 \gset
SELECT query_id AS q3 FROM queen.stream_register('st.kept', 'st_kept', NULL, 'x1') \gset
-- A pop of st_kept (of one partition, or queue-wide), in one line: its span and counts row.
CREATE FUNCTION pg_temp.pop_kept(part text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(DISTINCT format('%s (%s,%s]', p.partition_name, p.span_start, p.span_end), ' ')
                        FILTER (WHERE p.partition_id IS NOT NULL), 'nothing')
           || coalesce(' / ' || string_agg(format('leases_expired %s redelivered %s lease_dead_letters %s',
                                                  p.leases_expired, p.redelivered, p.lease_dead_letters), ' ')
                                   FILTER (WHERE p.partition_id IS NULL), '')
      FROM queen.pop('st_kept', part, 'g', 10, 1, false, true, NULL) p
$$;
-- One round: a cycle under k1's live lease keeps it (release_lease false), the lease expires,
-- a pop takes k1 over (odd rounds: queue-wide, even: of k1).
CREATE FUNCTION pg_temp.kept_round(q uuid, pid bigint, i int, ack text)
RETURNS TABLE(success boolean, noop boolean, counted_before_expiry boolean, popped text, committed bigint,
              attempts int)
LANGUAGE plpgsql AS $$
DECLARE
    c jsonb;
BEGIN
    c := pg_temp.cycle(q, pid, ack_tx => ack, ack_lease => pg_temp.lease(pid), release => false);
    success := (c->>'success')::boolean;
    noop := (c->'ack'->>'noop')::boolean;
    counted_before_expiry := (SELECT k.lease_counted FROM pg_temp.cursor(pid) k);
    PERFORM pg_temp.expire(pid);
    popped := pg_temp.pop_kept(CASE WHEN i % 2 = 0 THEN 'k1' END);
    SELECT k.committed, k.attempts INTO committed, attempts FROM pg_temp.cursor(pid) k;
    RETURN NEXT;
END $$;
SELECT pg_temp.pop_kept('k1') AS popped;
-- round 1 commits a1, the prefix; rounds 2-5 ack a1 again (a noop), keeping each new lease
SELECT i AS round, r.* FROM generate_series(1, 5) i, LATERAL pg_temp.kept_round(:'q3', :k1, i, 'a1') r;
SELECT count(*) AS dead_letters FROM queen.dead_letters WHERE queue_id = (SELECT id FROM queen.queues WHERE name = 'st_kept');
-- a longer prefix kept: the rest is redelivered, still no attempt
SELECT 6 AS round, r.* FROM pg_temp.kept_round(:'q3', :k1, 6, 'a3') r;
SELECT * FROM pg_temp.cursor(:k1);
-- the contrast: that lease expires with no cycle: one attempt, past retryLimit 0: a4 dead-lettered
SELECT pg_temp.expire(:k1);
SELECT pg_temp.pop_kept('k1') AS popped;
SELECT * FROM pg_temp.cursor(:k1);
-- k2: popped, expired without a cycle, popped again: b1 dead-lettered at once (lease_expired)
SELECT count(*) AS pushed FROM queen.push(ARRAY['st_kept'], ARRAY['k2'], ARRAY[3], ARRAY['b1', 'b2', 'b3'],
    array_fill(NULL::uuid, ARRAY[3]), array_fill(NULL::text, ARRAY[3]), ARRAY['5', '6', '7']);
SELECT pg_temp.pid('st_kept', 'k2') AS k2 \gset
SELECT pg_temp.pop_kept('k2') AS popped;
SELECT pg_temp.expire(:k2);
SELECT pg_temp.pop_kept(NULL) AS popped;
SELECT * FROM pg_temp.cursor(:k2);
-- a cycle that releases its lease (release_lease true) leaves nothing to expire
SELECT pg_temp.cycle(:'q3', :k2, ack_tx => 'b2', ack_lease => pg_temp.lease(:k2)) AS cycle;
SELECT * FROM pg_temp.cursor(:k2);
SELECT pg_temp.pop_kept('k2') AS popped;
SELECT p.name AS partition, d.msg_offset, d.transaction_id, d.reason, d.error_message, d.attempts
  FROM queen.dead_letters d JOIN queen.log_partitions p ON p.id = d.partition_id
 WHERE d.queue_id = (SELECT id FROM queen.queues WHERE name = 'st_kept') ORDER BY p.name, d.msg_offset;

-- the tests after this one count every queue's rows
SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(n)
  FROM unnest(ARRAY['st_src', 'st_sink', 'st_full', 'st_kept']) n) x;
DELETE FROM queen.stream_state s USING queen.stream_queries sq WHERE sq.id = s.query_id AND sq.name LIKE 'st.%';
DELETE FROM queen.stream_queries WHERE name LIKE 'st.%';
SELECT (SELECT count(*) FROM queen.stream_queries) AS queries, (SELECT count(*) FROM queen.stream_lanes) AS lanes,
       (SELECT count(*) FROM queen.stream_state) AS state_rows;
