#include "metrics/tenant_labels.hpp"

#include "domain/tenant_scope.hpp"
#include "metrics/queue_label_cap.hpp"

#include <algorithm>

namespace queen::metrics {

void split_tenant_labels(std::vector<prometheus::MetricFamily>& families, const std::string& default_tenant) {
    for (auto& family : families)
        for (auto& metric : family.metric) {
            auto& labels = metric.label;
            const auto queue =
                std::find_if(labels.begin(), labels.end(), [](const auto& l) { return l.name == "queue"; });
            if (queue == labels.end()) continue;
            std::string tenant;
            if (queue->value == queue_label_cap::other) {
                tenant = queue_label_cap::other;
            } else if (const auto cut = queue->value.find(domain::tenant_separator); cut != std::string::npos) {
                tenant = queue->value.substr(0, cut);
                queue->value.erase(0, cut + 1);
            } else {
                tenant = default_tenant;
            }
            labels.insert(queue, prometheus::ClientMetric::Label{"tenant", std::move(tenant)});
        }
}

}  // namespace queen::metrics
