#include "producer.hpp"

#include "payload.hpp"
#include "pg.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

namespace pgq_bench {

producer_plan plan_producer(std::uint32_t id, std::uint64_t messages, std::uint64_t producers) {
    const std::uint64_t base = messages / producers, extra = messages % producers;
    producer_plan p;
    p.id = id;
    p.count = base + (id < extra ? 1 : 0);
    p.first_seq = id * base + std::min<std::uint64_t>(id, extra);
    return p;
}

void run_producer(const options& o, producer_plan plan, run_state& state, producer_stats& st) {
    std::unique_ptr<connection> db;
    try {
        db = std::make_unique<connection>(o.conninfo, fmt::format("pgq_bench producer {}", plan.id));
        // One statement, one (implicit) transaction: `batch` pgq.insert_event calls, one per
        // array element, in array order.
        db->prepare("insert_events", "SELECT pgq.insert_event($1, 'msg', e) FROM unnest($2::text[]) AS e", 2);
    } catch (const std::exception& e) {
        state.stop(stop_reason::fatal, fmt::format("producer {}: {}", plan.id, e.what()));
    }
    state.arrive_and_wait_start();
    if (!db) return;

    std::string array;
    std::uint64_t next = plan.first_seq;
    const std::uint64_t end = plan.first_seq + plan.count;
    try {
        while (next < end && !state.stopping()) {
            const std::uint64_t n = std::min<std::uint64_t>(o.batch, end - next);
            build_payload_array(array, plan.id, next, n, o.payload_bytes);
            const auto t0 = steady::now();
            st.span.start(t0);
            if (o.explicit_begin) db->exec("BEGIN");
            auto r = db->exec_prepared("insert_events", {&o.queue, &array});
            if (o.explicit_begin) db->exec("COMMIT");
            const auto t1 = steady::now();
            const auto rows = static_cast<std::uint64_t>(PQntuples(r.get()));
            if (rows != n)
                throw pg_error(fmt::format("pgq.insert_event returned {} event ids for {} events", rows, n));
            st.span.end(t1);
            st.inserted += n;
            ++st.transactions;
            state.inserted.fetch_add(n, std::memory_order_relaxed);
            next += n;
        }
    } catch (const std::exception& e) {
        state.stop(stop_reason::fatal, fmt::format("producer {} at seq {}: {}", plan.id, next, e.what()));
    }
}

}  // namespace pgq_bench
