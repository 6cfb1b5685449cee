#pragma once
// The tenant label of the per-queue Prometheus series (docs/metrics.md, docs/tenancy.md): with
// tenancy on, a series' "queue" label (a stored key, or "__other__" past the label cap) becomes
// a "tenant" label and the queue's name in that tenant.
#include <prometheus/metric_family.h>

#include <string>
#include <vector>

namespace queen::metrics {

// Splits every "queue" label of the families into "tenant" and "queue": the tenant of the key,
// `default_tenant` for a key without one, "__other__" for "__other__".
void split_tenant_labels(std::vector<prometheus::MetricFamily>& families, const std::string& default_tenant);

}  // namespace queen::metrics
