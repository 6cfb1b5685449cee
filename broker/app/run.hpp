#pragma once
// The broker's life: configuration, database, services and server up, serving until SIGINT
// or SIGTERM, then a graceful stop.
namespace queen::app {

// Runs the broker until it is told to stop; returns its exit status. Throws
// std::invalid_argument for a configuration error and std::exception for any other failure
// to start.
int run();

}  // namespace queen::app
