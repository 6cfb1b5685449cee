#include "send_schedule.hpp"

namespace queen::bench {

steady::time_point send_schedule::due(steady::time_point now) {
    const auto s = slot();
    if (now - s > interval_) {
        const auto shift = (now - s) - interval_;
        origin_ += shift;
        slipped_ += shift;
        ++slips_;
    }
    return slot();
}

steady::duration send_schedule::sent(steady::time_point at) {
    const auto s = slot();
    ++next_;
    return at > s ? at - s : steady::duration(0);
}

steady::duration batch_interval(std::size_t rate, std::size_t batch, std::size_t producers) {
    const double seconds = static_cast<double>(batch) * static_cast<double>(producers) / static_cast<double>(rate);
    return std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace queen::bench
