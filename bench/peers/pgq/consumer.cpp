#include "consumer.hpp"

#include "pg.hpp"

#include <fmt/core.h>

#include <memory>
#include <string_view>
#include <thread>

namespace pgq_bench {

void run_consumer(const options& o, run_state& state, tally& book, consumer_stats& st) {
    std::unique_ptr<connection> db;
    try {
        db = std::make_unique<connection>(o.conninfo, "pgq_bench consumer");
        db->prepare("next_batch", "SELECT pgq.next_batch($1, $2)", 2);
        db->prepare("batch_events", "SELECT ev_data FROM pgq.get_batch_events($1)", 1);
        db->prepare("finish_batch", "SELECT pgq.finish_batch($1)", 1);
    } catch (const std::exception& e) {
        state.stop(stop_reason::fatal, fmt::format("consumer: {}", e.what()));
    }
    state.arrive_and_wait_start();
    if (!db) return;

    std::string batch_id;
    try {
        while (!state.stopping()) {
            if (!st.first_call) st.first_call = steady::now();
            db->exec("BEGIN");
            auto next = single_value(db->exec_prepared("next_batch", {&o.queue, &o.consumer}).get());
            if (!next) {
                db->exec("COMMIT");
                ++st.empty_polls;
                if (o.idle_sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.idle_sleep_ms));
                continue;
            }
            batch_id = *next;
            auto events = db->exec_prepared("batch_events", {&batch_id});
            const int rows = PQntuples(events.get());
            for (int i = 0; i < rows; ++i)
                book.record(std::string_view(PQgetvalue(events.get(), i, 0),
                                             static_cast<std::size_t>(PQgetlength(events.get(), i, 0))));
            events.reset();
            auto finished = single_value(db->exec_prepared("finish_batch", {&batch_id}).get());
            if (finished.value_or("0") != "1")
                throw pg_error(fmt::format("pgq.finish_batch({}) did not find the batch", batch_id));
            db->exec("COMMIT");
            const auto t = steady::now();
            st.last_finish = t;
            ++st.batches;
            if (rows == 0) ++st.empty_batches;
            st.events += static_cast<std::uint64_t>(rows);
            state.consumed.store(book.unique(), std::memory_order_relaxed);
            if (book.complete()) {
                st.complete_at = t;
                break;
            }
        }
    } catch (const std::exception& e) {
        state.stop(stop_reason::fatal, fmt::format("consumer (batch {}): {}", batch_id, e.what()));
    }
}

}  // namespace pgq_bench
