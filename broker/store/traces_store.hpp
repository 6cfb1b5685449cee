#pragma once
// Store layer (see store/queues_store.hpp): message traces (docs/traces.md).
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

struct trace_record {
    std::int64_t partition_id = 0;
    std::string transaction_id;
    std::string consumer_group;
    std::string event_type;
    std::string data_json;  // JSON text
    std::vector<std::string> trace_names;
};

// queen.record_trace: stores one trace event; its id, nullopt when the partition does not exist
// in the tenant `scope`.
boost::asio::awaitable<std::optional<std::string>> record_trace(db::pg_pool& pool, const trace_record& record,
                                                                const std::optional<std::string>& scope);

struct trace {
    std::string trace_id;
    std::int64_t partition_id = 0;
    std::string transaction_id;
    std::string consumer_group;
    std::string event_type;
    std::string data_json;         // JSON text, verbatim
    std::string trace_names_json;  // a JSON array of strings
    std::int64_t created_at_us = 0;
};

// queen.message_traces_of: the traces of one message (partition, transaction id) in the tenant
// `scope`, in time order.
boost::asio::awaitable<std::vector<trace>> message_traces_of(db::pg_pool& pool, std::int64_t partition_id,
                                                             const std::string& transaction_id,
                                                             const std::optional<std::string>& scope);

struct named_trace {
    trace event;
    std::optional<std::string> queue;  // nullopt once the partition is gone
    std::optional<std::string> partition;
};

struct named_trace_page {
    std::int64_t total = 0;  // every trace carrying the name, not only this page
    std::vector<named_trace> traces;
};

// queen.count_traces_by_name joined with queen.traces_by_name: the total and one page of the
// tenant `scope`'s traces, in time order; queues by stored key.
boost::asio::awaitable<named_trace_page> traces_by_name(db::pg_pool& pool, const std::string& name, std::int64_t limit,
                                                        std::int64_t offset, const std::optional<std::string>& scope);

struct trace_name_stats {
    std::string name;
    std::int64_t trace_count = 0;
    std::int64_t message_count = 0;
    std::int64_t last_seen_us = 0;
};

struct trace_name_page {
    std::int64_t total = 0;  // every distinct name, not only this page
    std::vector<trace_name_stats> names;
};

// queen.count_trace_names joined with queen.trace_names: the total and one page, most recently
// seen first, over the tenant `scope`'s traces.
boost::asio::awaitable<trace_name_page> trace_names(db::pg_pool& pool, std::int64_t limit, std::int64_t offset,
                                                    const std::optional<std::string>& scope);

}  // namespace queen::store
