-- queen.notify_brokers(channel, payloads): one pg_notify per payload, delivered at commit to
-- every broker listening on the channel (wake-ups of parked pops, maintenance changes).
CREATE OR REPLACE FUNCTION queen.notify_brokers(p_channel text, p_payloads text[])
RETURNS void
LANGUAGE sql
AS $$
    SELECT pg_notify(p_channel, p) FROM unnest(p_payloads) AS p
$$;
COMMENT ON FUNCTION queen.notify_brokers(text, text[]) IS
  'Sends one notification per payload on the channel (at commit).';
