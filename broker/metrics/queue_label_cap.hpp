#pragma once
// The queue label of the Prometheus families (docs/metrics.md): the queue's own name for the
// first QUEEN_METRICS_MAX_QUEUES distinct queues a broker sees, "__other__" for every queue
// after them, so a scrape's series stay bounded however many queues exist.
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace queen::metrics {

class queue_label_cap {
public:
    static constexpr std::string_view other = "__other__";

    explicit queue_label_cap(std::size_t max_queues) : max_queues_(max_queues) {}

    // The label for queue: itself while the cap admits it (once admitted, always), else
    // "__other__". The view stays valid for the cap's life (set nodes never move).
    std::string_view label(std::string_view queue);

private:
    struct hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::size_t max_queues_;
    std::mutex mutex_;
    std::unordered_set<std::string, hash, std::equal_to<>> admitted_;
};

}  // namespace queen::metrics
