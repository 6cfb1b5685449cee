#pragma once
// One family's series by label values, looked up without building a prometheus::Labels map or
// a throw-away metric per event (Family::Add allocates both): O(1) per event after the first.
#include <prometheus/family.h>
#include <prometheus/labels.h>

#include <utility>
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace queen::metrics {

template <class Metric, std::size_t N, class... Args>
class series_cache {
public:
    // names: the family's label names, in the order get() takes their values; args: what a new
    // series is made with (a histogram's bucket boundaries).
    series_cache(prometheus::Family<Metric>& family, std::array<std::string_view, N> names, Args... args)
        : family_(family), names_(names), args_(std::move(args)...) {}

    // The series with these label values, made on first use.
    Metric& get(const std::array<std::string_view, N>& values) {
        thread_local std::string key;  // reused: no allocation per event once warm
        key.clear();
        for (const auto& v : values) {
            key.append(v);
            key.push_back('\x1f');
        }
        std::lock_guard lock(mutex_);
        auto it = by_key_.find(key);
        if (it != by_key_.end()) return *it->second;
        prometheus::Labels labels;
        for (std::size_t i = 0; i < N; ++i) labels.emplace(std::string(names_[i]), std::string(values[i]));
        Metric& made = std::apply([&](const auto&... a) -> Metric& { return family_.Add(labels, a...); }, args_);
        by_key_.emplace(key, &made);
        return made;
    }

private:
    prometheus::Family<Metric>& family_;
    std::array<std::string_view, N> names_;
    std::tuple<Args...> args_;
    std::mutex mutex_;
    std::unordered_map<std::string, Metric*> by_key_;
};

}  // namespace queen::metrics
