#include "app/startup_signals.hpp"

#include <atomic>
#include <csignal>
#include <string>

namespace queen::app {
namespace {

// A signal handler can reach only static storage: the last signal recorded, 0 for none.
std::atomic<int> recorded{0};

extern "C" void record_signal(int sig) {
    recorded.store(sig);
}

void set_disposition(void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a blocking call in progress goes on; the step ends normally
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

startup_interrupted::startup_interrupted(int signal)
    : std::runtime_error("signal " + std::to_string(signal) + " during start-up"), signal_(signal) {}

startup_signals::startup_signals() {
    recorded.store(0);
    set_disposition(record_signal);
}

startup_signals::~startup_signals() {
    if (!handed_over_) set_disposition(SIG_DFL);
}

void startup_signals::check() {
    if (const int sig = recorded.load()) throw startup_interrupted(sig);
}

void startup_signals::hand_over() {
    handed_over_ = true;
    if (const int sig = recorded.exchange(0)) std::raise(sig);
}

}  // namespace queen::app
