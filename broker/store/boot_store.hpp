#pragma once
// Store layer (see store/queues_store.hpp): what boot reads once, synchronously, before
// the pool and the io_context exist. Each function opens and closes its own connection and
// throws std::runtime_error naming what it was reading.
#include <optional>
#include <string>

namespace queen::store {

// queen.codec_extension(): the installed queen_ext version, nullopt without it.
std::optional<std::string> read_codec_extension(const std::string& conninfo);

struct maintenance_state {
    bool push = false;
    bool pop = false;
    std::string database_id;  // "" when the database has no maintenance row
};

// queen.get_maintenance(): the flags and the database's identity; all off and "" when the
// schema predates maintenance.
maintenance_state read_maintenance_at_boot(const std::string& conninfo);

}  // namespace queen::store
