#include "api/json_text.hpp"
#include "api/opaque_span_offsets.hpp"
#include "api/routes.hpp"
#include "db/pg_array.hpp"
#include "db/pg_error.hpp"
#include "http/responses.hpp"
#include "segment/segment_codec.hpp"

#include <charconv>
#include <map>
#include <set>

namespace queen::api {

namespace asio = boost::asio;

namespace {

struct ack_answer {
    bool success = false;
    std::optional<std::int64_t> offset;
    bool noop = false;
    bool dlq = false;
    bool lease_released = false;
    std::optional<std::string> error;
};

std::optional<std::int64_t> parse_partition_id(const std::string& s) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || ptr != s.data() + s.size() || v <= 0) return std::nullopt;
    return v;
}

// The seven arrays of one queen.ack call for the acks `members` of one group.
std::vector<std::string> ack_call_arrays(const std::vector<ack_item>& acks, const std::vector<std::size_t>& members) {
    db::pg_array_builder pids, txids, offsets, leases, statuses, errors;
    for (auto i : members) {
        const auto& a = acks[i];
        pids.add(*parse_partition_id(a.partition_id));
        txids.add(a.transaction_id);
        if (a.offset) offsets.add(*a.offset);
        else offsets.add_null();
        if (a.lease_id && !a.lease_id->empty()) leases.add(*a.lease_id);
        else leases.add_null();
        statuses.add(std::string_view(to_sql(a.status)));
        if (a.error) errors.add(*a.error);
        else errors.add_null();
    }
    return {pids.finish(), txids.finish(), offsets.finish(), leases.finish(), statuses.finish(), errors.finish()};
}

constexpr const char* ack_sql =
    "SELECT item, success, msg_offset, noop, dlq, lease_released, error, queue_name "
    "FROM queen.ack($1, $2::bigint[], $3::text[], $4::bigint[], $5::uuid[], $6::text[], $7::text[])";

// Applies acks, one queen.ack call per consumer group; answers in input order. An ack by
// transaction id that the database cannot place (QNDEC: a zstd segment without queen_ext)
// gets its offset from the broker's own decoder, and the group's call is made again.
asio::awaitable<std::vector<ack_answer>> apply_acks(app::broker_context& ctx, std::vector<ack_item>& acks) {
    std::vector<ack_answer> answers(acks.size());
    std::map<std::string, std::vector<std::size_t>> by_group;
    for (std::size_t i = 0; i < acks.size(); ++i) {
        auto pid = parse_partition_id(acks[i].partition_id);
        bool lease_ok = !acks[i].lease_id || acks[i].lease_id->empty() || segment::parse_uuid(*acks[i].lease_id);
        if (!pid || !lease_ok) {
            answers[i].error = "unresolvable";
            answers[i].lease_released = true;
            continue;
        }
        by_group[acks[i].consumer_group].push_back(i);
    }
    std::set<std::string> released_queues;
    for (const auto& [group, members] : by_group) {
        std::optional<db::pg_result> res;
        for (int attempt = 0; !res; ++attempt) {
            const std::vector<std::string> arrays = ack_call_arrays(acks, members);
            std::vector<db::pg_param> params{db::pg_param::text(group)};
            for (const auto& a : arrays) params.push_back(db::pg_param::text(a));
            bool undecodable = false;
            try {
                res = co_await ctx.pool.exec(ack_sql, params, db::result_format::binary);
            } catch (const db::pg_error& e) {
                if (attempt > 0 || e.sqlstate() != undecodable_span_sqlstate) throw;
                undecodable = true;
            }
            if (undecodable) {
                std::vector<ack_item*> pending;
                for (auto i : members) pending.push_back(&acks[i]);
                co_await resolve_offsets_in_undecodable_spans(ctx.pool, std::move(pending));
            }
        }
        for (int row = 0; row < res->rows(); ++row) {
            auto k = static_cast<std::size_t>(res->int64(row, 0));
            if (k < 1 || k > members.size()) throw std::runtime_error("queen.ack returned an unknown item index");
            ack_answer& a = answers[members[k - 1]];
            a.success = res->boolean(row, 1);
            if (!res->is_null(row, 2)) a.offset = res->int64(row, 2);
            a.noop = res->boolean(row, 3);
            a.dlq = res->boolean(row, 4);
            a.lease_released = res->boolean(row, 5);
            if (!res->is_null(row, 6)) a.error = std::string(res->text(row, 6));
            if (a.lease_released && !res->is_null(row, 7)) released_queues.insert(std::string(res->text(row, 7)));
        }
    }
    // A released lease makes its partition claimable again: wake parked pops.
    if (!released_queues.empty()) ctx.notifier.queues_changed({released_queues.begin(), released_queues.end()});
    co_return answers;
}

void append_answer(std::string& out, const ack_item& item, const ack_answer& a) {
    out += "{\"success\":";
    out += a.success ? "true" : "false";
    out += ",\"transactionId\":";
    append_json_string(out, item.transaction_id);
    out += ",\"partitionId\":";
    append_json_string(out, item.partition_id);
    out += ",\"offset\":" + (a.offset ? std::to_string(*a.offset) : std::string("null"));
    if (a.noop) out += ",\"noop\":true";
    if (a.dlq) out += ",\"dlq\":true";
    out += ",\"leaseReleased\":";
    out += a.lease_released ? "true" : "false";
    out += ",\"error\":";
    if (a.error) append_json_string(out, *a.error);
    else out += "null";
    out += '}';
}

}  // namespace

// POST /api/v1/ack
asio::awaitable<http::response> handle_ack(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    std::vector<ack_item> acks{parse_ack(body)};
    auto answers = co_await apply_acks(ctx, acks);
    std::string out;
    append_answer(out, acks[0], answers[0]);
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// POST /api/v1/ack/batch
asio::awaitable<http::response> handle_ack_batch(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    auto acks = parse_ack_batch(body, ctx.limits);
    auto answers = co_await apply_acks(ctx, acks);
    std::string out = "[";
    for (std::size_t i = 0; i < acks.size(); ++i) {
        if (i) out += ',';
        append_answer(out, acks[i], answers[i]);
    }
    out += ']';
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

}  // namespace queen::api
