#pragma once
// A private PostgreSQL server owned by the broker: initdb on first run, pg_ctl start on a
// unix socket in a short /tmp path, stopped with the broker. Adopts a server left running
// by a broker that died. As root, runs the server as the `postgres` user.
#include <filesystem>
#include <string>

namespace queen::embedded {

struct server_user;  // who the server runs as (embedded_postgres.cpp)

struct embedded_options {
    std::filesystem::path data_dir;  // empty: default_data_dir()
    std::string bin_dir;             // empty: found via pg_config or /usr/lib/postgresql/15/bin
    std::string database = "queen";
};

class embedded_postgres {
public:
    // Starts (or adopts) the server and creates the database; throws std::runtime_error
    // with a clear message (e.g. a data directory the server user cannot reach).
    explicit embedded_postgres(embedded_options options);
    ~embedded_postgres();  // stops the server (fast shutdown)
    embedded_postgres(const embedded_postgres&) = delete;
    embedded_postgres& operator=(const embedded_postgres&) = delete;

    const std::string& conninfo() const noexcept { return conninfo_; }
    std::string psql_command() const;  // a ready `psql` command line
    void stop();

    // True when a server already running on the data directory was adopted (for example
    // one left behind by a broker killed with -9) instead of started; it is still stopped
    // by stop() and the destructor.
    bool adopted() const noexcept { return adopted_; }
    const std::filesystem::path& data_dir() const noexcept { return options_.data_dir; }
    const std::filesystem::path& socket_dir() const noexcept { return socket_dir_; }
    int port() const noexcept { return port_; }

    static std::filesystem::path default_data_dir();

private:
    void settle_options();
    bool prepare_data_dir(const server_user& user);  // true when it holds a cluster already
    std::filesystem::path prepare_server_log(const server_user& user);
    void init_cluster(const server_user& user);
    void check_cluster_version();
    bool adopt_running_server(const server_user& user, bool& own_socket_dir_unused);
    void start_server(const server_user& user, const std::filesystem::path& log);

    embedded_options options_;
    std::string conninfo_;
    std::filesystem::path socket_dir_;
    std::string run_as_;  // "postgres" when we are root, else empty
    int port_ = 5432;
    bool stopped_ = false;
    bool adopted_ = false;
};

}  // namespace queen::embedded
