#include "store/activity_store.hpp"

#include "db/pg_records.hpp"
#include "domain/message_id.hpp"

#include <vector>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

pg_param optional_text(const std::optional<std::string>& v) {
    return v ? pg_param::text(*v) : pg_param::null();
}

// $1 from, $2 to, $3 queue, $4 namespace, $5 task, $6 the tenant scope; the strings the params
// point into.
struct window_params {
    std::string from, to;
    std::vector<pg_param> params;
    explicit window_params(const status_window& w) : from(domain::iso_time(w.from_us)), to(domain::iso_time(w.to_us)) {
        params = {pg_param::text(from),  pg_param::text(to),    optional_text(w.queue), optional_text(w.namespace_name),
                  optional_text(w.task), optional_text(w.scope)};
    }
};

asio::awaitable<db::record_set> records(db::pg_pool& pool, std::string_view sql, const std::vector<pg_param>& params) {
    auto res = co_await pool.exec(sql, params, db::result_format::text);
    co_return db::to_record_set(res);
}

}  // namespace

asio::awaitable<void> flush_activity(db::pg_pool& pool, const std::string& document) {
    std::vector<pg_param> params{pg_param::text(document)};
    co_await pool.exec("SELECT queen.flush_activity($1::jsonb)", params);
}

asio::awaitable<db::record_set> status_throughput(db::pg_pool& pool, const status_window& w) {
    window_params p(w);
    co_return co_await records(
        pool, "SELECT * FROM queen.status_throughput($1::timestamptz, $2::timestamptz, $3, $4, $5, $6)", p.params);
}

asio::awaitable<db::record_set> status_summary(db::pg_pool& pool, const status_window& w) {
    window_params p(w);
    co_return co_await records(
        pool, "SELECT * FROM queen.status_summary($1::timestamptz, $2::timestamptz, $3, $4, $5, $6)", p.params);
}

asio::awaitable<db::record_set> status_top_errors(db::pg_pool& pool, const status_window& w) {
    std::vector<pg_param> params{optional_text(w.queue), optional_text(w.namespace_name), optional_text(w.task),
                                 optional_text(w.scope)};
    co_return co_await records(pool, "SELECT * FROM queen.status_top_errors($1, $2, $3, $4)", params);
}

asio::awaitable<db::record_set> status_queues(db::pg_pool& pool, const status_window& w, std::int64_t limit,
                                              std::int64_t offset, bool nonempty) {
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params{optional_text(w.queue),      optional_text(w.namespace_name),
                                 optional_text(w.task),       pg_param::text(limit_text),
                                 pg_param::text(offset_text), pg_param::text(nonempty ? "true" : "false"),
                                 optional_text(w.scope)};
    co_return co_await records(
        pool, "SELECT * FROM queen.status_queues_list($1, $2, $3, $4::int, $5::int, $6::boolean, $7)", params);
}

asio::awaitable<db::record_set> status_workers(db::pg_pool& pool, std::int64_t since_us) {
    const std::string since = domain::iso_time(since_us);
    std::vector<pg_param> params{pg_param::text(since)};
    co_return co_await records(pool, "SELECT * FROM queen.status_workers($1::timestamptz)", params);
}

asio::awaitable<db::record_set> status_queue(db::pg_pool& pool, const std::string& queue,
                                             const std::optional<std::string>& scope) {
    std::vector<pg_param> params{pg_param::text(queue), optional_text(scope)};
    co_return co_await records(pool, "SELECT * FROM queen.status_queue($1, $2)", params);
}

asio::awaitable<db::record_set> status_queue_partitions(db::pg_pool& pool, const std::string& queue) {
    std::vector<pg_param> params{pg_param::text(queue)};
    co_return co_await records(pool, "SELECT * FROM queen.status_queue_partitions($1)", params);
}

asio::awaitable<db::record_set> status_analytics(db::pg_pool& pool, const status_window& w,
                                                 const std::string& interval) {
    window_params p(w);
    auto params = p.params;
    params.insert(params.begin() + 2, pg_param::text(interval));
    co_return co_await records(
        pool, "SELECT * FROM queen.status_analytics($1::timestamptz, $2::timestamptz, $3, $4, $5, $6, $7)", params);
}

asio::awaitable<db::record_set> resources_overview(db::pg_pool& pool, const std::optional<std::string>& scope) {
    const std::vector<pg_param> params{optional_text(scope)};
    co_return co_await records(pool, "SELECT * FROM queen.resources_overview($1)", params);
}

asio::awaitable<postgres_stats> read_postgres_stats(db::pg_pool& pool, bool every_application) {
    const std::vector<pg_param> none;
    const std::vector<pg_param> whose{pg_param::text(every_application ? "true" : "false")};
    postgres_stats s;
    s.database = co_await records(pool, "SELECT * FROM queen.pg_database_cache()", none);
    s.tables = co_await records(pool, "SELECT * FROM queen.pg_table_cache()", none);
    s.indexes = co_await records(pool, "SELECT * FROM queen.pg_index_cache()", none);
    s.dead_tuples = co_await records(pool, "SELECT * FROM queen.pg_dead_tuples()", none);
    s.hot_updates = co_await records(pool, "SELECT * FROM queen.pg_hot_updates()", none);
    s.active_queries = co_await records(pool, "SELECT * FROM queen.pg_active_queries($1::boolean)", whose);
    s.autovacuum = co_await records(pool, "SELECT * FROM queen.pg_autovacuum_status()", none);
    s.buffer_usage = co_await records(pool, "SELECT * FROM queen.pg_buffer_usage()", none);
    s.table_sizes = co_await records(pool, "SELECT * FROM queen.pg_table_sizes()", none);
    co_return s;
}

asio::awaitable<int> bucket_minutes(db::pg_pool& pool, std::int64_t from_us, std::int64_t to_us) {
    const std::string from = domain::iso_time(from_us), to = domain::iso_time(to_us);
    std::vector<pg_param> params{pg_param::text(from), pg_param::text(to)};
    auto res = co_await pool.exec("SELECT queen.bucket_minutes($1::timestamptz, $2::timestamptz)", params);
    co_return static_cast<int>(res.int64(0, 0));
}

namespace {

std::string_view analytics_sql(analytics_view view) {
    switch (view) {
        case analytics_view::system_metrics:
            return "SELECT * FROM queen.analytics_system_metrics($1::timestamptz, $2::timestamptz, $3)";
        case analytics_view::worker_series:
            return "SELECT * FROM queen.analytics_worker_series($1::timestamptz, $2::timestamptz, $3)";
        case analytics_view::worker_queues:
            return "SELECT * FROM queen.analytics_worker_queues($1::timestamptz, $2::timestamptz)";
        case analytics_view::worker_summary:
            return "SELECT * FROM queen.analytics_worker_summary($1::timestamptz, $2::timestamptz, $3)";
        case analytics_view::queue_lag:
            return "SELECT * FROM queen.analytics_queue_lag($1::timestamptz, $2::timestamptz, $3, $4)";
        case analytics_view::queue_ops:
            return "SELECT * FROM queen.analytics_queue_ops($1::timestamptz, $2::timestamptz, $3, $4)";
        case analytics_view::queue_parked:
            return "SELECT * FROM queen.analytics_queue_parked($1::timestamptz, $2::timestamptz, $3, $4)";
        case analytics_view::retention:
            return "SELECT * FROM queen.analytics_retention($1::timestamptz, $2::timestamptz, $3, $4)";
    }
    return {};
}

// The views over queues, which take the tenant scope.
bool per_queue(analytics_view view) {
    return view == analytics_view::queue_lag || view == analytics_view::queue_ops ||
           view == analytics_view::queue_parked || view == analytics_view::retention;
}

}  // namespace

asio::awaitable<db::record_set> analytics_rows(db::pg_pool& pool, analytics_view view, std::int64_t from_us,
                                               std::int64_t to_us, const std::optional<std::string>& filter,
                                               const std::optional<std::string>& scope) {
    const std::string from = domain::iso_time(from_us), to = domain::iso_time(to_us);
    std::vector<pg_param> params{pg_param::text(from), pg_param::text(to)};
    if (view != analytics_view::worker_queues) params.push_back(optional_text(filter));
    if (per_queue(view)) params.push_back(optional_text(scope));
    co_return co_await records(pool, analytics_sql(view), params);
}

}  // namespace queen::store
