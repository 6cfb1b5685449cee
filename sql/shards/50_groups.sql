-- The proxy's hand-written group registration (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/50_groups.sql):
-- each shard holds the cursors of its partitions and, once the group popped there, its
-- subscription record.

-- queen_proxy.register_everywhere(queue, group, subscribe_all, subscription_at): registers a
-- popping group on every shard (consumer-group registrations live on every shard), at most
-- once a minute per (queue, group); the subscription start every shard is given, which the
-- pop passes on, so every shard starts the group at the same moment.
CREATE OR REPLACE FUNCTION queen_proxy.register_everywhere(p_queue text, p_group text, p_subscribe_all boolean,
                                                           p_subscription_at timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_at timestamptz := coalesce(p_subscription_at, now());
BEGIN
    IF p_queue IS NULL OR p_group IS NULL
       OR EXISTS (SELECT 1 FROM queen_proxy.registered_groups r
                   WHERE r.queue_name = p_queue AND r.consumer_group = p_group
                     AND r.checked_at > now() - interval '1 minute') THEN
        RETURN v_at;
    END IF;
    BEGIN
        PERFORM queen_proxy.register_group_on_all(p_queue, p_group, CASE WHEN p_subscribe_all THEN NULL ELSE v_at END,
                                                  CASE WHEN p_subscription_at IS NULL AND NOT p_subscribe_all
                                                       THEN v_at END);
    EXCEPTION WHEN OTHERS THEN
        -- A database that cannot be reached (down, switching over) fails the refresh of a group
        -- registered everywhere before: its pops of the other databases go on, and the refresh
        -- is tried again in a minute. A group never registered waits for every database.
        UPDATE queen_proxy.registered_groups r SET checked_at = now()
         WHERE r.queue_name = p_queue AND r.consumer_group = p_group;
        IF NOT FOUND THEN
            RAISE;
        END IF;
        RETURN v_at;
    END;
    INSERT INTO queen_proxy.registered_groups (queue_name, consumer_group) VALUES (p_queue, p_group)
    ON CONFLICT (queue_name, consumer_group) DO UPDATE SET checked_at = now();
    RETURN v_at;
END;
$$;
COMMENT ON FUNCTION queen_proxy.register_everywhere IS
  'Registers a popping group on every shard (consumer-group registrations live on every shard), at most once a minute per (queue, group).';
