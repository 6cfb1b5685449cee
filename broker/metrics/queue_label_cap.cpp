#include "metrics/queue_label_cap.hpp"

namespace queen::metrics {

std::string queue_label_cap::label(std::string_view queue) {
    std::lock_guard lock(mutex_);
    if (admitted_.find(queue) != admitted_.end()) return std::string(queue);
    if (admitted_.size() >= max_queues_) return std::string(other);
    admitted_.emplace(queue);
    return std::string(queue);
}

}  // namespace queen::metrics
