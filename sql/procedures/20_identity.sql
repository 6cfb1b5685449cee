-- Message identity. A message's id is derived from (partition_id, offset): 16 bytes,
-- the partition id then the offset, both big-endian, written as a UUID. It needs no
-- storage and is the same on every delivery. broker/domain/message_id.cpp implements
-- the same rule; tests check that both agree.

CREATE OR REPLACE FUNCTION queen.message_id(p_partition_id bigint, p_offset bigint)
RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT encode(int8send(p_partition_id) || int8send(p_offset), 'hex')::uuid $$;
COMMENT ON FUNCTION queen.message_id(bigint, bigint) IS
  'The id of the message at (partition, offset): both numbers big-endian as a UUID.';

CREATE OR REPLACE FUNCTION queen.message_id_partition(p_id uuid)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT ('x' || substr(replace(p_id::text, '-', ''), 1, 16))::bit(64)::bigint $$;
COMMENT ON FUNCTION queen.message_id_partition(uuid) IS
  'The partition id encoded in a message id.';

CREATE OR REPLACE FUNCTION queen.message_id_offset(p_id uuid)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT ('x' || substr(replace(p_id::text, '-', ''), 17, 16))::bit(64)::bigint $$;
COMMENT ON FUNCTION queen.message_id_offset(uuid) IS
  'The offset encoded in a message id.';
