#pragma once
// Running PostgreSQL's tools from tests. PostgreSQL refuses to run as root, so as root they run
// as the `postgres` user, which must own the directories they write.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace queen::test {

// The directory of PostgreSQL's server binaries (pg_ctl, initdb, …).
std::string pg_bin_dir();
// A TCP port on 127.0.0.1 that nothing listens on now.
int free_tcp_port();
// `path` owned by the server user (nothing when not root).
void give_to_server_user(const std::filesystem::path& path);
// SIGKILL to the postmaster named by `pgdata`/postmaster.pid, if that process is a PostgreSQL
// one, and to its children (as when its machine is lost).
void kill_postmaster_of(const std::filesystem::path& pgdata);
// Runs args[0] (absolute) as the server user, with PG* variables removed and `env` added
// ("NAME=value"), and waits for it: {exit status, standard output and error}.
std::pair<int, std::string> run_as_server(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// Starts args[0] (absolute) as the server user in a new session (its pid is its process group,
// so kill(-pid) reaches everything it starts), with PG* variables removed and `env` added
// ("NAME=value"), its output appended to `log`. Returns its pid; the caller reaps it.
pid_t spawn_as_server(const std::vector<std::string>& args, const std::vector<std::string>& env,
                      const std::filesystem::path& log);

}  // namespace queen::test
