#include "services/pop_waiters.hpp"

#include <vector>

namespace queen::services {

std::uint64_t pop_waiters::add(const std::string& queue, wake_fn fn) {
    std::lock_guard lock(mutex_);
    auto id = next_id_++;
    by_queue_[queue].emplace(id, std::move(fn));
    return id;
}

void pop_waiters::remove(const std::string& queue, std::uint64_t id) {
    std::lock_guard lock(mutex_);
    auto it = by_queue_.find(queue);
    if (it == by_queue_.end()) return;
    it->second.erase(id);
    if (it->second.empty()) by_queue_.erase(it);
}

void pop_waiters::wake(const std::string& queue, wake_reason reason) {
    std::vector<wake_fn> fns;
    {
        std::lock_guard lock(mutex_);
        auto it = by_queue_.find(queue);
        if (it == by_queue_.end()) return;
        for (auto& [id, fn] : it->second) fns.push_back(fn);
    }
    for (auto& fn : fns) fn(reason);
}

void pop_waiters::wake_all(wake_reason reason) {
    std::vector<wake_fn> fns;
    {
        std::lock_guard lock(mutex_);
        for (auto& [queue, m] : by_queue_)
            for (auto& [id, fn] : m) fns.push_back(fn);
    }
    for (auto& fn : fns) fn(reason);
}

std::map<std::string, std::size_t, std::less<>> pop_waiters::counts_by_queue() const {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::size_t, std::less<>> out;
    for (const auto& [queue, m] : by_queue_)
        if (!m.empty()) out.emplace(queue, m.size());
    return out;
}

std::size_t pop_waiters::size() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (auto& [queue, m] : by_queue_) n += m.size();
    return n;
}

}  // namespace queen::services
