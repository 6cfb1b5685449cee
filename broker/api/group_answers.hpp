#pragma once
// The consumer-group answers (API.md, "Consumer groups"; shapes in docs/consumer-groups.md),
// written from the cursors queen.group_cursors returns.
#include "store/groups_store.hpp"

#include <string>
#include <vector>

namespace queen::api {

// GET /api/v1/consumer-groups: one object per group, per-queue counts only. `rows` are
// ordered by group, queue, partition.
std::string render_group_list(const std::vector<store::group_cursor>& rows);

// GET /api/v1/consumer-groups/:group: the one group of `rows` (not empty), with its partitions.
std::string render_group_detail(const std::vector<store::group_cursor>& rows);

}  // namespace queen::api
