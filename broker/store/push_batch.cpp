#include "store/push_batch.hpp"

#include "db/pg_array.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace queen::store {

push_batch make_push_batch(const std::vector<const std::vector<domain::push_item>*>& requests) {
    std::map<std::pair<std::string_view, std::string_view>, std::vector<std::pair<std::size_t, std::size_t>>> keys;
    for (std::size_t r = 0; r < requests.size(); ++r)
        for (std::size_t i = 0; i < requests[r]->size(); ++i) {
            const auto& item = (*requests[r])[i];
            keys[{item.queue, item.partition}].emplace_back(r, i);
        }
    db::pg_array_builder queues, partitions, counts, txids, traces, producers, payloads;
    push_batch out;
    for (const auto& [key, members] : keys) {
        queues.add(key.first);
        partitions.add(key.second);
        counts.add(static_cast<std::int64_t>(members.size()));
        for (auto [r, i] : members) {
            const auto& item = (*requests[r])[i];
            txids.add(item.transaction_id);
            traces.add_optional(item.trace_id ? std::optional<std::string_view>(*item.trace_id) : std::nullopt);
            producers.add_optional(item.producer_sub ? std::optional<std::string_view>(*item.producer_sub)
                                                     : std::nullopt);
            payloads.add(item.payload);
            out.position.emplace_back(r, i);
        }
    }
    out.arrays = {queues.finish(), partitions.finish(), counts.finish(),  txids.finish(),
                  traces.finish(), producers.finish(),  payloads.finish()};
    return out;
}

std::pair<std::size_t, std::size_t> position_of(const push_batch& batch, std::size_t item) {
    if (item < 1 || item > batch.position.size())
        throw std::runtime_error("a push result names item " + std::to_string(item) + " of " +
                                 std::to_string(batch.position.size()));
    return batch.position[item - 1];
}

}  // namespace queen::store
