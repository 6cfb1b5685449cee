#pragma once
// Fixed-rate send slots of one producer (--rate): slot j is origin + j x interval, computed
// from the origin (no drift from request times). A producer that is more than one interval
// behind its slot moves the origin forward so that it is exactly one interval behind: it then
// sends at most one batch late back-to-back instead of bursting to catch up (a "slip").
#include "stats.hpp"

#include <cstdint>

namespace queen::bench {

class send_schedule {
public:
    send_schedule(steady::time_point origin, steady::duration interval) : origin_(origin), interval_(interval) {}

    // When the next batch is due, given the time now; slips the schedule when now is more than one interval past it.
    steady::time_point due(steady::time_point now);

    // The next batch was sent at `at`: moves to the next slot; returns how late it was (>= 0).
    steady::duration sent(steady::time_point at);

    std::uint64_t slips() const { return slips_; }
    steady::duration slipped() const { return slipped_; }  // total time the origin was moved

private:
    // The slot of the next batch: origin + next x interval.
    steady::time_point slot() const { return origin_ + interval_ * static_cast<std::int64_t>(next_); }

    steady::time_point origin_;
    steady::duration interval_;
    std::uint64_t next_ = 0;
    std::uint64_t slips_ = 0;
    steady::duration slipped_{0};
};

// Per-producer interval between batches so that `producers` producers sending `batch`
// messages each offer `rate` messages/s together.
steady::duration batch_interval(std::size_t rate, std::size_t batch, std::size_t producers);

}  // namespace queen::bench
