#pragma once
// The consumer-group answers (docs/consumer-groups.md; shapes
// and decisions in docs/consumer-groups.md).
#include "store/groups_store.hpp"

#include <string>
#include <vector>

namespace queen::api {

// A (group, queue) whose oldest waiting message is older than this is "Lagging".
inline constexpr std::int64_t lagging_after_seconds = 300;

// GET /api/v1/consumer-groups: an array, one element per registered (group, queue), in the
// order of `rows` (group, then queue).
std::string render_group_list(const std::vector<store::group_summary>& rows);

// GET /api/v1/consumer-groups/:group: an object keyed by queue name, each with the group's
// cursors on it by partition name; {} when the group has no cursor. `rows` are ordered by
// queue, then partition.
std::string render_group_detail(const std::vector<store::group_cursor>& rows);

// GET /api/v1/consumer-groups/lagging: a snake_case array in the order of `rows`.
std::string render_lagging(const std::vector<store::lagging_cursor>& rows);

}  // namespace queen::api
