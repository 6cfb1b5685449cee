#pragma once
// The paging members every listing answer ends with.
#include "render/json_writer.hpp"

#include <cstdint>

namespace queen::api {

// Writes "total": N, "pagination": {"limit": L, "offset": O} into the open object.
inline void write_paging(render::json_writer& out, std::int64_t total, std::int64_t limit, std::int64_t offset) {
    out.field("total", total)
        .key("pagination")
        .begin_object()
        .field("limit", limit)
        .field("offset", offset)
        .end_object();
}

}  // namespace queen::api
