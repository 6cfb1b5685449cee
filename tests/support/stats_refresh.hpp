#pragma once
// POST /api/v1/stats/refresh until one takes a snapshot: a refresh while another session (a
// broker's timer) holds the stats lock answers {"skipped": true}, and is asked again.
#include "http_client.hpp"
#include "test_env.hpp"

#include <functional>

namespace queen::test {

// True once a refresh sent by `ask` answered 200 without "skipped" (within eventually's limit).
inline bool refresh_stats_taken(const std::function<http_reply()>& ask) {
    return eventually([&] {
        const auto r = ask();
        return r.status == 200 && !r.json().value("skipped", false);
    });
}

}  // namespace queen::test
