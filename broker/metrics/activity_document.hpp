#pragma once
// The JSON document queen.flush_activity takes (sql/procedures/93_activity_metrics.sql): its
// member names are the columns of migration 17's tables.
#include "metrics/activity_counters.hpp"

#include <string>

namespace queen::metrics {

struct broker_identity {
    std::string hostname;
    unsigned short port = 0;
};

std::string activity_document(const minute_activity& minute, const broker_identity& broker, int retention_days);

}  // namespace queen::metrics
