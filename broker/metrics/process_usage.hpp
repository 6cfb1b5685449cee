#pragma once
// This process's CPU time and memory, read from the kernel.
namespace queen::metrics {

struct process_usage {
    double cpu_user_seconds = 0, cpu_system_seconds = 0;
    double resident_bytes = 0, virtual_bytes = 0;  // zeros when /proc/self/statm is unreadable
};

// Now: getrusage(RUSAGE_SELF) and /proc/self/statm.
process_usage read_process_usage();

}  // namespace queen::metrics
