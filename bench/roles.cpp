#include "roles.hpp"

#include <fmt/core.h>

namespace queen::bench {

std::string group_name(const options& o, std::size_t g) { return fmt::format("{}-g{}", o.queue, g); }

std::string stage_queue(const options& o, std::size_t k) { return fmt::format("{}-s{}", o.queue, k); }

std::string producer_queue(const options& o) { return o.mode == run_mode::pipeline ? stage_queue(o, 0) : o.queue; }

std::size_t stream_count(const options& o) { return o.groups > 0 ? o.groups : 1; }

consumer_role consumer_role_of(const options& o, std::size_t i) {
    consumer_role r;
    r.queue = o.queue;
    if (o.groups > 0) {
        r.stream = i % o.groups;
        r.group = group_name(o, r.stream);
    } else {
        r.group = o.consumer_group;
    }
    return r;
}

std::size_t worker_stage(const options& o, std::size_t i) { return i % o.stages; }

consumer_role final_stage_role(const options& o) {
    consumer_role r;
    r.queue = stage_queue(o, o.stages - 1);
    return r;
}

std::vector<std::size_t> workers_per_stage(const options& o) {
    std::vector<std::size_t> n(o.stages, 0);
    for (std::size_t i = 0; i < o.consumers; ++i) ++n[worker_stage(o, i)];
    return n;
}

std::string workers_per_stage_text(const options& o) {
    std::string s;
    for (auto n : workers_per_stage(o)) s += (s.empty() ? "" : "/") + std::to_string(n);
    return s;
}

}  // namespace queen::bench
