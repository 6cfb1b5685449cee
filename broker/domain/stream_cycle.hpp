#pragma once
// A stream cycle and a state read as the stream routes parse them and the store runs them
// (docs/streams.md): plain values, no database.
#include "domain/push_item.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::domain {

struct stream_state_filter {
    std::vector<std::string> keys;  // empty: every key
    std::optional<std::string> key_prefix;
    std::optional<std::string> ripe_at_or_before;  // a JSON number's text
};

struct stream_state_op {
    bool upsert = true;  // false: delete
    std::string key;
    std::string value;  // JSON text, for an upsert
};

struct stream_cycle_ack {
    std::string transaction_id;
    std::optional<std::int64_t> offset;   // when the broker resolved it itself
    std::optional<std::string> lease_id;  // canonical UUID text
    bool dead_letter = false;             // failed/dlq; else completed
    std::optional<std::string> error;
};

struct stream_cycle_call {
    std::string query_id;
    std::int64_t partition_id = 0;
    std::string consumer_group;
    std::vector<stream_state_op> state_ops;
    std::vector<push_item> push_items;
    std::vector<bool> derive_transaction_id;  // per push item: sent without one
    std::optional<stream_cycle_ack> ack;
    std::optional<std::string> lease_id;  // a cycle without an ack: its live lease (canonical UUID text)
    bool release_lease = true;
};

}  // namespace queen::domain
