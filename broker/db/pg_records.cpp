#include "db/pg_records.hpp"

namespace queen::db {

namespace {

// Type OIDs of pg_type.dat.
db::value_kind kind_of(Oid type) {
    switch (type) {
        case 16:
            return db::value_kind::boolean;
        case 20:
        case 21:
        case 23:
            return db::value_kind::integer;
        case 700:
        case 701:
        case 1700:
            return db::value_kind::number;
        default:
            return db::value_kind::text;
    }
}

}  // namespace

db::record_set to_record_set(const pg_result& res) {
    db::record_set out;
    const int columns = res.columns();
    for (int c = 0; c < columns; ++c) {
        out.columns.emplace_back(PQfname(res.get(), c));
        out.kinds.push_back(kind_of(PQftype(res.get(), c)));
    }
    out.rows.reserve(static_cast<std::size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
        auto& row = out.rows.emplace_back();
        row.reserve(static_cast<std::size_t>(columns));
        for (int c = 0; c < columns; ++c) {
            if (res.is_null(r, c))
                row.emplace_back();
            else
                row.emplace_back(std::string(res.text(r, c)));
        }
    }
    return out;
}

}  // namespace queen::db
