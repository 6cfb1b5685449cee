#include "api/shared/spool_push.hpp"

#include "api/shared/api_error.hpp"
#include "api/shared/push_answers.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"

namespace queen::api {

bool push_goes_to_spool(const broker_context& ctx) {
    return ctx.maintenance.push_paused() || ctx.spool.pending() > 0;
}

boost::asio::awaitable<http::response> spool_push(broker_context& ctx, const std::vector<domain::push_item>& items,
                                                  std::int64_t accepted_at_us, bool in_doubt,
                                                  const domain::tenant_scope& scope) {
    std::vector<spool::record> records;
    records.reserve(items.size());
    for (const auto& item : items) {
        spool::record r;
        r.item = item;
        r.accepted_at_us = accepted_at_us;
        r.in_doubt = in_doubt;
        records.push_back(std::move(r));
    }
    std::string failure;
    bool full = false;
    try {
        co_await ctx.spool.append(std::move(records));
    } catch (const spool::spool_error& e) {
        failure = e.what();
        full = e.full();
    }
    if (!failure.empty()) {
        // The details (paths, errno) go to the log, not to the client.
        log::warn("push: the spool cannot take {} item(s): {}", items.size(), failure);
        throw api_error(error_code::unavailable,
                        full
                            ? "push not accepted: the database is not taking pushes now and this broker's spool is full"
                            : "push not accepted: the database is not taking pushes now and this broker's spool "
                              "cannot be written",
                        1);
    }
    ctx.drainer.kick();
    for (const auto& item : items) ctx.prometheus.buffered(item.queue, 1);

    std::string out = render_buffered_answers(items, scope);
    co_return http::json_text(http::bhttp::status::created, std::move(out));
}

}  // namespace queen::api
