#pragma once
// Store layer (see store/queues_store.hpp): the per-minute activity counters and the status
// routes that read them (sql/procedures/93_activity_metrics.sql, 94_status.sql). Reads come
// back as record sets whose column names are the answers' member names.
#include "db/pg_pool.hpp"
#include "db/record_set.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace queen::store {

// queen.flush_activity: adds one broker's minute (the JSON document that function describes).
boost::asio::awaitable<void> flush_activity(db::pg_pool& pool, const std::string& document);

// A status window and its filters (NULL filters match every queue).
struct status_window {
    std::int64_t from_us = 0;
    std::int64_t to_us = 0;
    std::optional<std::string> queue;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    // The tenant scope (sql/procedures/21_tenancy.sql) of the routes that take it.
    std::optional<std::string> scope;
};

// queen.status_throughput: the throughput rows, newest bucket first.
boost::asio::awaitable<db::record_set> status_throughput(db::pg_pool& pool, const status_window& w);
// queen.status_summary: the one-row part of /api/v1/status.
boost::asio::awaitable<db::record_set> status_summary(db::pg_pool& pool, const status_window& w);
// queen.status_top_errors: {error, count} of the newest dead letters of the matching queues.
boost::asio::awaitable<db::record_set> status_top_errors(db::pg_pool& pool, const status_window& w);
// queen.status_queues_list: the matching queues of w.scope (only those holding messages when
// nonempty), names as the scope's tenant knows them.
boost::asio::awaitable<db::record_set> status_queues(db::pg_pool& pool, const status_window& w, std::int64_t limit,
                                                     std::int64_t offset, bool nonempty);
// queen.status_workers: brokers that flushed since `since_us`.
boost::asio::awaitable<db::record_set> status_workers(db::pg_pool& pool, std::int64_t since_us);
// queen.status_queue and queen.status_queue_partitions: one queue by its stored key (no row:
// unknown; its name as the tenant `scope` shows it) and its partitions counted now.
boost::asio::awaitable<db::record_set> status_queue(db::pg_pool& pool, const std::string& queue,
                                                    const std::optional<std::string>& scope);
boost::asio::awaitable<db::record_set> status_queue_partitions(db::pg_pool& pool, const std::string& queue);

// queen.status_analytics: messages pushed per interval bucket ("minute", "hour" or "day").
boost::asio::awaitable<db::record_set> status_analytics(db::pg_pool& pool, const status_window& w,
                                                        const std::string& interval);

// queen.resources_overview: the one row of /api/v1/resources/overview over the tenant `scope`.
boost::asio::awaitable<db::record_set> resources_overview(db::pg_pool& pool, const std::optional<std::string>& scope);

// PostgreSQL's statistics of this database and the queen schema (96_postgres_stats.sql).
struct postgres_stats {
    db::record_set database;  // one row: timestamp, database, databaseCache.*, bufferConfig.*, cacheSummary.*
    db::record_set tables, indexes, dead_tuples, hot_updates, active_queries, autovacuum, buffer_usage, table_sizes;
};
// every_application: the running statements of every application, else only the broker's own.
boost::asio::awaitable<postgres_stats> read_postgres_stats(db::pg_pool& pool, bool every_application);

// queen.bucket_minutes: the bucket width of a window (docs/http-api.md, "Time windows and counts").
boost::asio::awaitable<int> bucket_minutes(db::pg_pool& pool, std::int64_t from_us, std::int64_t to_us);

// The row sets of /api/v1/analytics/* (95_analytics.sql), each over a window and one filter
// (a hostname or a queue's stored key, as the view takes; nullopt: none); the views by queue
// cover the queues of the tenant `scope` and name them as it shows them.
enum class analytics_view {
    system_metrics,  // by hostname
    worker_series,   // by hostname
    worker_queues,   // no filter
    worker_summary,  // by hostname
    queue_lag,       // by queue
    queue_ops,       // by queue
    queue_parked,    // by queue
    retention,       // by queue
};
boost::asio::awaitable<db::record_set> analytics_rows(db::pg_pool& pool, analytics_view view, std::int64_t from_us,
                                                      std::int64_t to_us, const std::optional<std::string>& filter,
                                                      const std::optional<std::string>& scope);

}  // namespace queen::store
