-- Payload rules (sql/procedures/12_payload_rules.sql, docs/json-input.md): the depth limit,
-- what the SQL API refuses, and what SQL readers see of rows stored before the limit.
\set VERBOSITY terse
SELECT queen.max_payload_depth();

-- Depth: arrays and objects on the deepest path.
SELECT v, queen.jsonb_depth_exceeds(v::jsonb, 1) AS over_1, queen.jsonb_depth_exceeds(v::jsonb, 2) AS over_2
  FROM (VALUES ('1'), ('[]'), ('[1, 2]'), ('{"a": [1]}'), ('[[[]]]'), ('{"a": {"b": 1}, "c": 2}')) t(v);
SELECT queen.jsonb_depth_exceeds((repeat('[', 1000) || repeat(']', 1000))::jsonb, 1000) AS at_limit,
       queen.jsonb_depth_exceeds((repeat('{"a":', 1000) || '[]' || repeat('}', 1000))::jsonb, 1000) AS one_over;

-- The SQL API refuses what HTTP refuses, naming the payload, and stores nothing.
SELECT status FROM queen.send('depth', (repeat('[', 1000) || repeat(']', 1000))::jsonb);
SELECT status FROM queen.send('depth', (repeat('[', 1001) || repeat(']', 1001))::jsonb);
SELECT count(*) FROM queen.send_batch('depth', ARRAY['1'::jsonb, '2', (repeat('[', 1001) || repeat(']', 1001))::jsonb]);
SELECT "offset", jsonb_typeof(payload) FROM queen.messages WHERE queue = 'depth' ORDER BY 1;

-- Rows stored deeper than the limit (queen.push takes text unchecked, as earlier versions
-- stored it): readers get the jsonb where jsonb can read it, NULL past PostgreSQL's stack limit.
SELECT item, status FROM queen.push(ARRAY['old'], ARRAY['Default'], ARRAY[3], ARRAY['a', 'b', 'c'],
                                    ARRAY[NULL, NULL, NULL]::uuid[], ARRAY[NULL, NULL, NULL]::text[],
                                    ARRAY[repeat('[', 100000) || repeat(']', 100000),
                                          repeat('[', 3000) || repeat(']', 3000),
                                          '{"s": "a\u0000b"}']);
SELECT "offset", payload IS NULL AS unreadable, jsonb_typeof(payload), octet_length(payload::text)
  FROM queen.messages WHERE queue = 'old' ORDER BY 1;
SELECT payload FROM queen.messages WHERE queue = 'old' AND "offset" = 3;
SELECT queen.payload_jsonb_deep(repeat('{"a":', 50000) || '1' || repeat('}', 50000)) IS NULL AS too_deep_for_jsonb;

-- leave the database as found for the suites after this one
SELECT queen.delete_queue('depth') AS depth_deleted, queen.delete_queue('old') AS old_deleted;
