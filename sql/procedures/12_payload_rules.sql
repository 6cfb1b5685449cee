-- Payload rules (docs/json-input.md).
-- queen.max_payload_depth(): the nesting limit of a payload, the one source of its value
--   (the broker reads it at boot). jsonb input fails at about 13,100 levels of objects
--   under the default max_stack_depth (2MB), containment (@>) at about 8,100: 1,000 leaves
--   room for any reader.
-- queen.jsonb_depth_exceeds(payload, limit): whether a jsonb nests deeper than limit.
-- queen.check_payload_depths(payloads): raises QN400 naming the first payload too deep;
--   the SQL API (queen.send, queen.send_batch) calls it. queen.push and queen.transaction
--   take JSON text their caller has checked (the broker refuses deeper payloads itself):
--   checking text in SQL would cost a jsonb parse of every large payload on the push path.

CREATE OR REPLACE FUNCTION queen.max_payload_depth()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1000 $$;
COMMENT ON FUNCTION queen.max_payload_depth() IS
  'Nesting levels (arrays and objects) a payload may have; deeper ones are refused.';

-- Depth counts the arrays and objects on the deepest path: 1 is 0 levels, [] is 1,
-- {"a":[1]} is 2. Deeper than limit means an array or object sits at level limit (the value
-- itself is level 0); strict mode, so that arrays are not unwrapped.
CREATE OR REPLACE FUNCTION queen.jsonb_depth_exceeds(p_payload jsonb, p_limit integer)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT jsonb_path_exists(p_payload,
        format('strict $.**{%s} ? (@.type() == "array" || @.type() == "object")', p_limit)::jsonpath)
$$;
COMMENT ON FUNCTION queen.jsonb_depth_exceeds(jsonb, integer) IS
  'Whether a jsonb value nests deeper than the limit (arrays and objects on its deepest path).';

CREATE OR REPLACE FUNCTION queen.check_payload_depths(p_payloads jsonb[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_item integer;
BEGIN
    SELECT u.i INTO v_item
      FROM unnest(p_payloads) WITH ORDINALITY AS u(payload, i)
     WHERE queen.jsonb_depth_exceeds(u.payload, queen.max_payload_depth())
     LIMIT 1;
    IF v_item IS NOT NULL THEN
        RAISE EXCEPTION 'payload % nests deeper than % levels, the limit for payloads', v_item, queen.max_payload_depth()
            USING ERRCODE = 'QN400';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.check_payload_depths(jsonb[]) IS
  'Raises QN400 naming the first payload (1-based) nested deeper than queen.max_payload_depth().';

-- queen.payload_jsonb_deep(payload): payload_jsonb's path for text that might nest deeper than
-- jsonb can read (stored before the limit existed, or through queen.push from SQL): NULL
-- where PostgreSQL's stack limit stops the cast, instead of an error for the whole query.
CREATE OR REPLACE FUNCTION queen.payload_jsonb_deep(p_payload text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
    RETURN regexp_replace(p_payload, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::jsonb;
EXCEPTION WHEN statement_too_complex THEN
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION queen.payload_jsonb_deep(text) IS
  'A stored payload as jsonb, NULL where it nests too deep for jsonb to read.';
