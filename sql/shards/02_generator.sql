-- The one description of the API the proxy serves (queen_proxy.api_routes) and the generator
-- that turns it into PL/Proxy functions with the shards' own signatures
-- (queen_proxy.generate_api, called by `queen shards init` after these files).
--
-- Each row is one function of the proxy; `target` is the shard function it calls (its
-- signature is read from the first shard). Routes:
--   first     RUN ON 0: configuration every shard holds alike, read from one (deterministic)
--   hash      RUN ON queen.partition_hash(<arg>): the shard of a (queue, partition)
--   id        RUN ON <arg>: a partition id, whose low bits are its logical shard
--   split     SPLIT every array; RUN ON <arg> (an array of hashes or partition ids)
--   all       RUN ON ALL: written to every shard; the answer is the first row by <arg>
--   sum       RUN ON ALL: the shards' answers added up
--   every     RUN ON ALL: every shard's rows (in the order <arg> when given)
--   on_shard  RUN ON p_shard, a first argument naming the logical shard; the target without it
--   custom    written by hand in another sql/shards file (the generator checks it exists)
--   refuse    not served over shards yet: QN501 naming the function
CREATE TABLE IF NOT EXISTS queen_proxy.api_routes (
    proxy_function text PRIMARY KEY,
    route          text NOT NULL CHECK (route IN ('first', 'hash', 'id', 'split', 'all', 'sum', 'every', 'on_shard',
                                                  'custom', 'refuse')),
    arg            text,
    target         text
);

TRUNCATE queen_proxy.api_routes;
INSERT INTO queen_proxy.api_routes (proxy_function, route, arg, target) VALUES
    -- delivery
    ('queen.push',                      'custom',   NULL, NULL),
    ('queen_proxy.push_part',           'split',    'p_shards', 'queen.push_part'),
    ('queen.push_spooled',              'custom',   NULL, NULL),
    ('queen_proxy.push_spooled_part',   'split',    'p_shards', 'queen.push_spooled_part'),
    ('queen.pop',                       'custom',   NULL, NULL),
    ('queen_proxy.pop',                 'on_shard', NULL, 'queen.pop'),
    ('queen.pop_fused',                 'custom',   NULL, NULL),
    ('queen_proxy.pop_fused_part',      'on_shard', NULL, 'queen.pop_fused_part'),
    ('queen_proxy.shard_ready_at_every', 'every',   NULL, 'queen.shard_ready_at'),
    ('queen_proxy.shard_ready_at_on',   'on_shard', NULL, 'queen.shard_ready_at'),
    ('queen.ack',                       'custom',   NULL, NULL),
    ('queen_proxy.ack_part',            'split',    'p_shards', 'queen.ack_part'),
    ('queen.ack_fused',                 'custom',   NULL, NULL),
    ('queen_proxy.ack_fused_part',      'split',    'p_shards', 'queen.ack_fused_part'),
    ('queen.transaction',               'custom',   NULL, NULL),
    ('queen_proxy.transaction',         'on_shard', NULL, 'queen.transaction'),
    ('queen.live_span_segments',        'split',    'p_partition_ids', NULL),
    ('queen.release_lease',             'custom',   NULL, NULL),
    ('queen_proxy.release_lease_part',  'split',    'p_shards', 'queen.release_lease_part'),
    ('queen.extend_lease',              'custom',   NULL, NULL),
    ('queen_proxy.extend_lease_part',   'split',    'p_shards', 'queen.extend_lease_part'),
    ('queen.record_trace',              'id',       'p_partition_id', NULL),
    ('queen.notify_brokers',            'first',    NULL, NULL),
    -- consumer groups (sql/shards/40_groups.sql)
    ('queen_proxy.register_group_on_all', 'every',  NULL, 'queen.register_group_from'),
    ('queen.seek_group',                'custom',   NULL, NULL),
    ('queen_proxy.seek_group',          'on_shard', NULL, 'queen.seek_group'),
    ('queen_proxy.seek_group_on_all',   'every',    NULL, 'queen.seek_group'),
    ('queen.set_group_subscription',    'all',      'queues_updated DESC', NULL),
    ('queen.delete_group',              'custom',   NULL, NULL),
    ('queen_proxy.delete_group_on_all', 'every',    NULL, 'queen.delete_group'),
    ('queen.group_cursors',             'custom',   NULL, NULL),
    ('queen_proxy.group_cursors_every', 'every',    NULL, 'queen.group_cursors'),
    ('queen.lagging_cursors',           'every',
     'oldest_unconsumed_at, consumer_group COLLATE "C", queue_name COLLATE "C", partition_name COLLATE "C"', NULL),
    ('queen.list_group_summaries',      'custom',   NULL, NULL),
    ('queen_proxy.list_group_summaries_every', 'every', NULL, 'queen.list_group_summaries'),
    -- dead letters (sql/shards/50_dead_letters.sql)
    ('queen.count_dead_letters',        'sum',      NULL, NULL),
    ('queen.purge_dead_letters',        'sum',      NULL, NULL),
    ('queen.list_dead_letters',         'custom',   NULL, NULL),
    ('queen_proxy.list_dead_letters_every', 'every', NULL, 'queen.list_dead_letters'),
    ('queen_proxy.dead_letter_failures_every', 'every', NULL, 'queen.dead_letter_failures'),
    ('queen.dead_letter_segments',      'custom',   NULL, NULL),
    ('queen_proxy.dead_letter_segments', 'on_shard', NULL, 'queen.dead_letter_segments'),
    ('queen.requeue_dead_letter_set',   'custom',   NULL, NULL),
    ('queen_proxy.requeue_dead_letter_set', 'on_shard', NULL, 'queen.requeue_dead_letter_set'),
    -- one message, by its partition id (its low bits name the shard)
    ('queen.message_detail',            'id',       'p_partition_id', NULL),
    ('queen.message_consumer_groups',   'id',       'p_partition_id', NULL),
    ('queen.delete_message',            'id',       'p_partition_id', NULL),
    ('queen.message_traces_of',         'id',       'p_partition_id', NULL),
    ('queen.scoped_partition_id',       'id',       'p_id', NULL),
    ('queen.scoped_partition_ids',      'custom',   NULL, NULL),
    ('queen_proxy.scoped_partition_ids_part', 'split', 'p_shards', 'queen.scoped_partition_ids_part'),
    ('queen.browse_mode',               'custom',   NULL, NULL),
    ('queen_proxy.partition_groups_every', 'every', NULL, 'queen.partition_groups'),
    -- functions of their arguments alone
    ('queen.message_id',                'first',    NULL, NULL),
    ('queen.bucket_minutes',            'first',    NULL, NULL),
    ('queen.tenant_queue_key',          'first',    NULL, NULL),
    -- listings (sql/shards/60_listings.sql)
    ('queen.list_queues',               'custom',   NULL, NULL),
    ('queen_proxy.list_queues_every',   'every',    NULL, 'queen.list_queues'),
    ('queen.list_groupings',            'custom',   NULL, NULL),
    ('queen.queue_detail',              'custom',   NULL, NULL),
    ('queen_proxy.queue_detail_every',  'every',    NULL, 'queen.queue_detail'),
    ('queen.stats_age',                 'custom',   NULL, NULL),
    ('queen_proxy.stats_age_every',     'every',    NULL, 'queen.stats_age'),
    -- streams (sql/shards/70_streams.sql)
    ('queen.stream_register',           'custom',   NULL, NULL),
    ('queen_proxy.stream_register_on_all', 'every', NULL, 'queen.stream_register'),
    ('queen.stream_state_get',          'custom',   NULL, NULL),
    ('queen_proxy.stream_state_get',    'id',       'p_partition_id', 'queen.stream_state_get'),
    ('queen.stream_cycle',              'custom',   NULL, NULL),
    ('queen_proxy.stream_cycle',        'on_shard', NULL, 'queen.stream_cycle'),
    ('queen.stream_queries_overview',   'custom',   NULL, NULL),
    ('queen_proxy.stream_queries_overview_every', 'every', NULL, 'queen.stream_queries_overview'),
    -- browsing, traces and tenants (sql/shards/80_browse_traces_tenants.sql)
    ('queen.browse_messages',           'custom',   NULL, NULL),
    ('queen_proxy.browse_messages_every', 'every',  NULL, 'queen.browse_messages'),
    ('queen.trace_names',               'custom',   NULL, NULL),
    ('queen_proxy.trace_names_every',   'every',    NULL, 'queen.trace_names'),
    ('queen.count_trace_names',         'custom',   NULL, NULL),
    ('queen.traces_by_name',            'custom',   NULL, NULL),
    ('queen_proxy.traces_by_name_every', 'every',   NULL, 'queen.traces_by_name'),
    ('queen.count_traces_by_name',      'sum',      NULL, NULL),
    ('queen.tenant_usage',              'custom',   NULL, NULL),
    ('queen_proxy.tenant_usage_every',  'every',    NULL, 'queen.tenant_usage'),
    ('queen_proxy.tenant_queue_names_every', 'every', NULL, 'queen.tenant_queue_names'),
    -- configuration, written to every shard and read from one
    ('queen.configure',                 'custom',   NULL, NULL),
    ('queen_proxy.configure_every',     'every',    NULL, 'queen.configure'),
    ('queen_proxy.catalog_queues',      'first',    NULL, 'queen.catalog_queues'),
    ('queen.queue_encryption',          'first',    NULL, NULL),
    ('queen.get_maintenance',           'first',    NULL, NULL),
    ('queen.set_maintenance',           'all',      NULL, NULL),
    ('queen.codec_extension',           'first',    NULL, NULL),
    ('queen.max_payload_depth',         'first',    NULL, NULL),
    ('queen.flush_activity',            'first',    NULL, NULL),
    -- operator; health asks every shard (one down: unhealthy)
    ('queen.database_health',           'all',      NULL, NULL),
    ('queen.shard_status',              'every',    NULL, NULL),
    -- queues and stats (a queue deleted on every shard; stats refreshed on each, sql/shards/65_refresh_stats.sql)
    ('queen.delete_queue',                'all',     'x DESC', NULL),
    ('queen.refresh_stats',               'custom',  NULL, NULL),
    -- status and analytics: the brokers' activity rows on the first shard, the rest merged (sql/shards/90_status.sql)
    ('queen.metrics_scrape',              'custom',  NULL, NULL),
    ('queen_proxy.metrics_scrape_every',  'every',   NULL, 'queen.metrics_scrape'),
    ('queen.resources_overview',          'custom',  NULL, NULL),
    ('queen_proxy.resources_overview_every', 'every',   NULL, 'queen.resources_overview'),
    ('queen.status_summary',              'custom',  NULL, NULL),
    ('queen_proxy.status_summary_every',  'every',   NULL, 'queen.status_summary'),
    ('queen.status_throughput',           'first',   NULL, NULL),
    ('queen.status_top_errors',           'custom',  NULL, NULL),
    ('queen_proxy.status_top_errors_every', 'every',   NULL, 'queen.status_top_errors'),
    ('queen.status_workers',              'first',   NULL, NULL),
    ('queen.status_queue',                'custom',  NULL, NULL),
    ('queen_proxy.status_queue_every',    'every',   NULL, 'queen.status_queue'),
    ('queen.status_queue_partitions',     'custom',  NULL, NULL),
    ('queen_proxy.status_queue_partitions_every', 'every',   NULL, 'queen.status_queue_partitions'),
    ('queen.status_queues_list',          'custom',  NULL, NULL),
    ('queen_proxy.status_queues_list_every', 'every',   NULL, 'queen.status_queues_list'),
    ('queen.status_analytics',            'first',   NULL, NULL),
    ('queen.analytics_queue_lag',         'first',   NULL, NULL),
    ('queen.analytics_queue_ops',         'custom',  NULL, NULL),
    ('queen_proxy.analytics_queue_ops_every', 'every',   NULL, 'queen.analytics_queue_ops'),
    ('queen.analytics_queue_parked',      'first',   NULL, NULL),
    ('queen.analytics_retention',         'custom',  NULL, NULL),
    ('queen_proxy.analytics_retention_every', 'every',   NULL, 'queen.analytics_retention'),
    ('queen.analytics_system_metrics',    'first',   NULL, NULL),
    ('queen.analytics_worker_queues',     'first',   NULL, NULL),
    ('queen.analytics_worker_series',     'first',   NULL, NULL),
    ('queen.analytics_worker_summary',    'custom',  NULL, NULL),
    ('queen_proxy.analytics_worker_summary_every', 'every',   NULL, 'queen.analytics_worker_summary'),
    -- PostgreSQL statistics, merged per object (sql/shards/95_postgres_stats.sql)
    ('queen.pg_active_queries',           'custom',  NULL, NULL),
    ('queen_proxy.pg_active_queries_every', 'every',   NULL, 'queen.pg_active_queries'),
    ('queen.pg_autovacuum_status',        'custom',  NULL, NULL),
    ('queen_proxy.pg_autovacuum_status_every', 'every',   NULL, 'queen.pg_autovacuum_status'),
    ('queen.pg_buffer_usage',             'custom',  NULL, NULL),
    ('queen_proxy.pg_buffer_usage_every', 'every',   NULL, 'queen.pg_buffer_usage'),
    ('queen.pg_database_cache',           'custom',  NULL, NULL),
    ('queen_proxy.pg_database_cache_every', 'every',   NULL, 'queen.pg_database_cache'),
    ('queen.pg_dead_tuples',              'custom',  NULL, NULL),
    ('queen_proxy.pg_dead_tuples_every',  'every',   NULL, 'queen.pg_dead_tuples'),
    ('queen.pg_hot_updates',              'custom',  NULL, NULL),
    ('queen_proxy.pg_hot_updates_every',  'every',   NULL, 'queen.pg_hot_updates'),
    ('queen.pg_index_cache',              'custom',  NULL, NULL),
    ('queen_proxy.pg_index_cache_every',  'every',   NULL, 'queen.pg_index_cache'),
    ('queen.pg_table_cache',              'custom',  NULL, NULL),
    ('queen_proxy.pg_table_cache_every',  'every',   NULL, 'queen.pg_table_cache'),
    ('queen.pg_table_sizes',              'custom',  NULL, NULL),
    ('queen_proxy.pg_table_sizes_every',  'every',   NULL, 'queen.pg_table_sizes');

-- queen_proxy.generate_api(): (re)creates every function of queen_proxy.api_routes with the
-- first shard's signature of its target; returns how many it created. Refused (QN409) when a
-- target is missing on the shard, or a custom function is missing or declared otherwise.
CREATE OR REPLACE FUNCTION queen_proxy.generate_api()
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    r        record;
    v_shards text := 'queen_shards';
    v_args   text;
    v_call   text;
    v_result text;
    v_set    text;
    v_n      integer := 0;
BEGIN
    CREATE TEMP TABLE shard_signatures ON COMMIT DROP AS
        SELECT * FROM queen_proxy.shard_signatures(
            (SELECT array_agg(split_part(coalesce(target, proxy_function), '.', 2)) FROM queen_proxy.api_routes));
    FOR r IN
        SELECT a.*, s.arguments, s.argument_names, s.result, s.returns_set, s.returns_table, s.name AS found
          FROM queen_proxy.api_routes a
          LEFT JOIN shard_signatures s ON s.name = split_part(coalesce(a.target, a.proxy_function), '.', 2)
         ORDER BY a.proxy_function
    LOOP
        IF r.found IS NULL THEN
            RAISE EXCEPTION 'the shards have no function % for the proxy''s %', coalesce(r.target, r.proxy_function),
                  r.proxy_function USING ERRCODE = 'QN409';
        END IF;
        v_args := coalesce(array_to_string(r.argument_names, ', '), '');
        v_call := format('%s(%s)', coalesce(r.target, r.proxy_function), v_args);
        -- The answer as a set: a scalar result becomes SETOF it.
        v_set := CASE WHEN r.returns_table OR r.returns_set THEN r.result ELSE 'SETOF ' || r.result END;
        IF r.route = 'custom' THEN
            IF to_regproc(r.proxy_function) IS NULL THEN
                RAISE EXCEPTION 'the proxy lacks its hand-written %', r.proxy_function USING ERRCODE = 'QN409';
            END IF;
            CONTINUE;
        END IF;
        EXECUTE format('DROP ROUTINE IF EXISTS %s', r.proxy_function);
        IF r.route = 'every' AND r.proxy_function LIKE 'queen\_proxy.%' THEN
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON ALL; TARGET %s; $body$',
                           r.proxy_function, r.arguments, v_set, v_shards, r.target);
        ELSIF r.route IN ('first', 'hash', 'id', 'split') THEN
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plproxy AS $body$ CLUSTER %L; %s RUN ON %s; %s $body$',
                           r.proxy_function, r.arguments, r.result, v_shards,
                           CASE WHEN r.route = 'split' THEN 'SPLIT ALL;' ELSE '' END,
                           CASE r.route WHEN 'first' THEN '0'
                                        WHEN 'hash' THEN format('queen.partition_hash(%s)', r.arg)
                                        ELSE r.arg END,
                           CASE WHEN r.target IS NOT NULL THEN format('TARGET %s;', r.target) ELSE '' END);
        ELSIF r.route = 'on_shard' THEN
            EXECUTE format('CREATE FUNCTION %s(p_shard integer, %s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON p_shard; SELECT * FROM %s; $body$',
                           r.proxy_function, r.arguments, r.result, v_shards, v_call);
        ELSIF r.route IN ('all', 'sum', 'every') THEN
            EXECUTE format('DROP FUNCTION IF EXISTS queen_proxy.%s_on_all', split_part(r.proxy_function, '.', 2));
            EXECUTE format('CREATE FUNCTION queen_proxy.%s_on_all(%s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON ALL; TARGET %s; $body$',
                           split_part(r.proxy_function, '.', 2), r.arguments, v_set, v_shards,
                           coalesce(r.target, r.proxy_function));
            -- A shard's error comes back as the shard raised it (queen_proxy.reraise).
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql AS $body$ #variable_conflict use_column
'
                           'BEGIN %s; EXCEPTION WHEN OTHERS THEN PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM); END $body$',
                           r.proxy_function, r.arguments, r.result,
                           CASE WHEN r.route = 'sum'
                                THEN format('RETURN (SELECT coalesce(sum(x), 0)::%s FROM queen_proxy.%s_on_all(%s) AS x)',
                                            r.result, split_part(r.proxy_function, '.', 2), v_args)
                                WHEN r.returns_table OR r.returns_set
                                THEN format('RETURN QUERY SELECT * FROM queen_proxy.%s_on_all(%s) %s %s',
                                            split_part(r.proxy_function, '.', 2), v_args,
                                            CASE WHEN r.arg IS NOT NULL THEN 'ORDER BY ' || r.arg ELSE '' END,
                                            CASE WHEN r.route = 'all' THEN 'LIMIT 1' ELSE '' END)
                                ELSE format('RETURN (SELECT x FROM queen_proxy.%s_on_all(%s) AS x %s LIMIT 1)',
                                            split_part(r.proxy_function, '.', 2), v_args,
                                            CASE WHEN r.arg IS NOT NULL THEN 'ORDER BY ' || r.arg ELSE '' END) END);
        ELSE
            -- A procedure (the broker CALLs it) has no result.
            EXECUTE format('CREATE %s %s(%s) %s LANGUAGE plpgsql AS $body$ BEGIN '
                           'RAISE EXCEPTION %L USING ERRCODE = %L; END $body$',
                           CASE WHEN r.result IS NULL THEN 'PROCEDURE' ELSE 'FUNCTION' END, r.proxy_function,
                           r.arguments, CASE WHEN r.result IS NULL THEN '' ELSE 'RETURNS ' || r.result END,
                           format('%s is not served over shards yet (docs/scaling.md)', r.proxy_function), 'QN501');
        END IF;
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END;
$$;
