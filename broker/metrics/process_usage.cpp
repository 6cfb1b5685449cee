#include "metrics/process_usage.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

namespace queen::metrics {

namespace {

double seconds(const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

}  // namespace

process_usage read_process_usage() {
    process_usage u;
    rusage r{};
    if (getrusage(RUSAGE_SELF, &r) == 0) {
        u.cpu_user_seconds = seconds(r.ru_utime);
        u.cpu_system_seconds = seconds(r.ru_stime);
    }
    std::ifstream statm("/proc/self/statm");
    double pages_virtual = 0, pages_resident = 0;
    if (statm >> pages_virtual >> pages_resident) {
        const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
        u.resident_bytes = pages_resident * page;
        u.virtual_bytes = pages_virtual * page;
    }
    return u;
}

}  // namespace queen::metrics
