#include "util/open_files_limit.hpp"

#include <fmt/core.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace queen::util {

namespace {

std::string shown(rlim_t v) {
    return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v);
}

}  // namespace

std::string raise_open_files_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return fmt::format("open files limit: unknown ({})", std::strerror(errno));
    if (limit.rlim_cur == limit.rlim_max) return fmt::format("open files limit: {}", shown(limit.rlim_cur));
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
        return fmt::format("open files limit: {} (raising it to the hard limit {} failed: {})", shown(before),
                           shown(limit.rlim_max), std::strerror(errno));
    return fmt::format("open files limit: raised from {} to the hard limit {}", shown(before), shown(limit.rlim_max));
}

}  // namespace queen::util
