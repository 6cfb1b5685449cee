#include "metrics/queue_label_cap.hpp"

namespace queen::metrics {

std::string_view queue_label_cap::label(std::string_view queue) {
    std::lock_guard lock(mutex_);
    if (const auto it = admitted_.find(queue); it != admitted_.end()) return *it;
    if (admitted_.size() >= max_queues_) return other;
    return *admitted_.emplace(queue).first;
}

}  // namespace queen::metrics
