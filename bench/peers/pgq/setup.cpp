#include "setup.hpp"

#include <fmt/core.h>

namespace pgq_bench {

namespace {

// Sets the queue's ticker_max_lag (seconds, as an interval) and ticker_max_count.
void apply_ticker_config(connection& db, const options& o) {
    const std::string lag = fmt::format("{} seconds", o.ticker_max_lag_s);
    const std::string count = std::to_string(o.ticker_max_count);
    const std::string lag_key = "ticker_max_lag", count_key = "ticker_max_count";
    db.exec("SELECT pgq.set_queue_config($1, $2, $3)", {&o.queue, &lag_key, &lag});
    db.exec("SELECT pgq.set_queue_config($1, $2, $3)", {&o.queue, &count_key, &count});
}

// True when `sql` (one boolean column) answers true for `params`.
bool ask(connection& db, const std::string& sql, std::initializer_list<const std::string*> params) {
    auto r = db.exec(sql, params);
    return single_value(r.get()).value_or("f") == "t";
}

}  // namespace

setup_result set_up_queue(connection& db, const options& o) {
    setup_result s;
    db.exec("CREATE EXTENSION IF NOT EXISTS pgq");
    s.queue_created = single_value(db.exec("SELECT pgq.create_queue($1)", {&o.queue}).get()).value_or("0") == "1";
    apply_ticker_config(db, o);
    s.consumer_registered =
        single_value(db.exec("SELECT pgq.register_consumer($1, $2)", {&o.queue, &o.consumer}).get()).value_or("0") ==
        "1";
    return s;
}

void check_queue_ready(connection& db, const options& o) {
    if (!ask(db, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pgq')", {}))
        throw setup_error(fmt::format("database {} has no pgq extension: run --mode produce --queue {} first",
                                      db.database(), o.queue));
    if (!ask(db, "SELECT EXISTS (SELECT 1 FROM pgq.queue WHERE queue_name = $1)", {&o.queue}))
        throw setup_error(fmt::format("queue '{}' does not exist: run --mode produce --queue {} first", o.queue, o.queue));
    if (!ask(db,
             "SELECT EXISTS (SELECT 1 FROM pgq.subscription s JOIN pgq.queue q ON q.queue_id = s.sub_queue "
             "JOIN pgq.consumer c ON c.co_id = s.sub_consumer WHERE q.queue_name = $1 AND c.co_name = $2)",
             {&o.queue, &o.consumer}))
        throw setup_error(fmt::format(
            "consumer '{}' is not registered on queue '{}': its events were not retained for it", o.consumer, o.queue));
    apply_ticker_config(db, o);
}

}  // namespace pgq_bench
