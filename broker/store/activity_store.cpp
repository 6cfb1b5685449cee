#include "store/activity_store.hpp"

#include "core/message_id.hpp"
#include "db/pg_records.hpp"

#include <vector>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

pg_param optional_text(const std::optional<std::string>& v) { return v ? pg_param::text(*v) : pg_param::null(); }

// $1 from, $2 to, $3 queue, $4 namespace, $5 task; the strings the params point into.
struct window_params {
    std::string from, to;
    std::vector<pg_param> params;
    explicit window_params(const status_window& w) : from(core::iso_time(w.from_us)), to(core::iso_time(w.to_us)) {
        params = {pg_param::text(from), pg_param::text(to), optional_text(w.queue), optional_text(w.namespace_name),
                  optional_text(w.task)};
    }
};

asio::awaitable<render::record_set> records(db::pg_pool& pool, std::string_view sql,
                                            const std::vector<pg_param>& params) {
    auto res = co_await pool.exec(sql, params, db::result_format::text);
    co_return db::to_record_set(res);
}

}  // namespace

asio::awaitable<void> flush_activity(db::pg_pool& pool, const std::string& document) {
    std::vector<pg_param> params{pg_param::text(document)};
    co_await pool.exec("SELECT queen.flush_activity($1::jsonb)", params);
}

asio::awaitable<render::record_set> status_throughput(db::pg_pool& pool, const status_window& w) {
    window_params p(w);
    co_return co_await records(
        pool, "SELECT * FROM queen.status_throughput($1::timestamptz, $2::timestamptz, $3, $4, $5)", p.params);
}

asio::awaitable<render::record_set> status_summary(db::pg_pool& pool, const status_window& w) {
    window_params p(w);
    co_return co_await records(
        pool, "SELECT * FROM queen.status_summary($1::timestamptz, $2::timestamptz, $3, $4, $5)", p.params);
}

asio::awaitable<render::record_set> status_top_errors(db::pg_pool& pool, const status_window& w) {
    std::vector<pg_param> params{optional_text(w.queue), optional_text(w.namespace_name), optional_text(w.task)};
    co_return co_await records(pool, "SELECT * FROM queen.status_top_errors($1, $2, $3)", params);
}

asio::awaitable<render::record_set> status_queues(db::pg_pool& pool, const status_window& w, std::int64_t limit,
                                                  std::int64_t offset, bool nonempty) {
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params{optional_text(w.queue),     optional_text(w.namespace_name),
                                 optional_text(w.task),      pg_param::text(limit_text),
                                 pg_param::text(offset_text), pg_param::text(nonempty ? "true" : "false")};
    co_return co_await records(
        pool, "SELECT * FROM queen.status_queues_list($1, $2, $3, $4::int, $5::int, $6::boolean)", params);
}

asio::awaitable<render::record_set> status_workers(db::pg_pool& pool, std::int64_t since_us) {
    const std::string since = core::iso_time(since_us);
    std::vector<pg_param> params{pg_param::text(since)};
    co_return co_await records(pool, "SELECT * FROM queen.status_workers($1::timestamptz)", params);
}

asio::awaitable<render::record_set> status_queue(db::pg_pool& pool, const std::string& queue) {
    std::vector<pg_param> params{pg_param::text(queue)};
    co_return co_await records(pool, "SELECT * FROM queen.status_queue($1)", params);
}

asio::awaitable<render::record_set> status_queue_partitions(db::pg_pool& pool, const std::string& queue) {
    std::vector<pg_param> params{pg_param::text(queue)};
    co_return co_await records(pool, "SELECT * FROM queen.status_queue_partitions($1)", params);
}

asio::awaitable<render::record_set> status_analytics(db::pg_pool& pool, const status_window& w,
                                                     const std::string& interval) {
    window_params p(w);
    auto params = p.params;
    params.insert(params.begin() + 2, pg_param::text(interval));
    co_return co_await records(
        pool, "SELECT * FROM queen.status_analytics($1::timestamptz, $2::timestamptz, $3, $4, $5, $6)", params);
}

}  // namespace queen::store
