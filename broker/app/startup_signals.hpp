#pragma once
// SIGINT and SIGTERM while the broker starts (the embedded PostgreSQL started, the schema
// applied): recorded instead of ending the process where it stands, so that start-up stops at
// the end of the step under way and whatever it started is stopped on the way out.
#include <stdexcept>

namespace queen::app {

// Thrown by startup_signals::check(): start-up was asked to stop.
class startup_interrupted : public std::runtime_error {
public:
    explicit startup_interrupted(int signal);
    int signal() const noexcept { return signal_; }

private:
    int signal_;
};

class startup_signals {
public:
    startup_signals();   // records SIGINT and SIGTERM from now on
    ~startup_signals();  // their default action again, unless handed over
    startup_signals(const startup_signals&) = delete;
    startup_signals& operator=(const startup_signals&) = delete;

    // Throws startup_interrupted when a signal was recorded; a no-op otherwise.
    static void check();

    // Call once the running broker's own handlers are installed (app/graceful_stop.hpp): a
    // signal recorded until then is raised again for them to act on.
    void hand_over();

private:
    bool handed_over_ = false;
};

}  // namespace queen::app
