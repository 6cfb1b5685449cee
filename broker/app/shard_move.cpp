#include "app/shard_move.hpp"

#include "app/shard_move_target.hpp"
#include "db/conninfo.hpp"
#include "db/pg_error.hpp"
#include "db/sync_connection.hpp"
#include "log/log.hpp"
#include "schema/shard_proxy_installer.hpp"
#include "store/shard_move_store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>

namespace queen::app {

namespace {

using clock = std::chrono::steady_clock;

// A connection string or message as it may be shown: without passwords.
std::string shown(std::string_view text) {
    return db::redact_passwords(text);
}

// Rows per page of the copy: a page is one call on each side.
constexpr int page_rows = 500;
// How long a fence (or its lifting) keeps trying while traffic holds the tables.
constexpr std::chrono::seconds lock_patience{30};
// How long the proxies' calls begun before the repoint are waited for (a broker's statement
// timeout is 30 s by default).
constexpr std::chrono::seconds earlier_calls_patience{60};

// Runs `step` until it does not fail for a busy table (lock_timeout, deadlock), for at most
// lock_patience; other failures are thrown at once.
template <class Step>
void retry_while_busy(Step step, const char* what) {
    const auto deadline = clock::now() + lock_patience;
    for (;;) {
        try {
            step();
            return;
        } catch (const db::pg_error& e) {
            const bool busy =
                e.sqlstate() == db::sqlstate::lock_not_available || e.sqlstate() == db::sqlstate::deadlock_detected;
            if (!busy || clock::now() > deadline) throw;
            log::debug("{}: tables busy, trying again", what);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Copies every page of `tables` from the source to the target's open transaction; rows copied.
std::int64_t copy_tables(db::sync_connection& source, db::sync_connection& target, int shard,
                         const std::vector<std::string>& tables) {
    std::int64_t rows = 0;
    for (const auto& table : tables) {
        std::string after;
        for (;;) {
            auto page = store::export_rows(source, shard, table, after, page_rows);
            if (page.rows.empty()) break;
            store::import_rows(target, table, page.rows);
            rows += static_cast<std::int64_t>(page.rows.size());
            if (static_cast<int>(page.rows.size()) < page_rows) break;
            after = page.last_tid;
        }
    }
    return rows;
}

// What the proxies map; all must agree, or a move would leave them pointing apart. Only a move
// of `shard` left unfinished (`earlier`) during its repoint may leave them disagreeing on that
// shard, between its source and its target: then the shard is taken to be on the target.
std::vector<std::string> agreed_mapping(std::vector<db::sync_connection>& proxies, const std::vector<std::string>& urls,
                                        int shard, const std::optional<store::move_record>& earlier) {
    std::vector<std::string> mapping;
    bool on_target = false;
    for (std::size_t i = 0; i < proxies.size(); ++i) {
        auto m = store::read_shard_mapping(proxies[i]);
        if (m.empty())
            throw std::runtime_error("proxy " + shown(urls[i]) + " has no shard cluster (run queen shards init)");
        const bool moving = earlier && shard >= 0 && static_cast<std::size_t>(shard) < m.size();
        if (moving) {
            const auto& here = m[static_cast<std::size_t>(shard)];
            if (here != earlier->source && here != earlier->target)
                throw std::runtime_error("proxy " + shown(urls[i]) + " maps the moving logical shard to " +
                                         shown(here));
            on_target = on_target || here == earlier->target;
        }
        if (i == 0) {
            mapping = std::move(m);
            continue;
        }
        if (moving) m[static_cast<std::size_t>(shard)] = mapping[static_cast<std::size_t>(shard)];
        if (m != mapping)
            throw std::runtime_error("proxy " + shown(urls[i]) + " maps the logical shards otherwise than " +
                                     shown(urls[0]) + " (run queen shards init on it with the same databases)");
    }
    if (on_target) mapping[static_cast<std::size_t>(shard)] = earlier->target;
    return mapping;
}

// Waits on every proxy for the calls begun before a repoint (queen.wait_for_earlier_calls): one
// that read the old mapping may still be on its way to the source, where the fence refuses it
// (QNMOV, retried) as long as it stands.
void wait_for_earlier_calls(std::vector<db::sync_connection>& proxies, const std::vector<std::string>& urls) {
    for (std::size_t i = 0; i < proxies.size(); ++i) {
        const int left = store::wait_for_earlier_calls(proxies[i], earlier_calls_patience);
        if (left > 0)
            log::warn("proxy {}: {} transaction(s) begun before the repoint still run; releasing the shard anyway",
                      shown(urls[i]), left);
    }
}

// Undoes a move that failed after its fence: the target's copy removed when it was adopted,
// the fence lifted. Best effort; what fails is logged.
void abandon(db::sync_connection& source, db::sync_connection& target, int shard, bool adopted) {
    if (adopted) {
        try {
            store::release_shard(target, shard);
        } catch (const std::exception& e) {
            log::error("the target's copy of logical shard {} could not be removed: {}", shard, shown(e.what()));
        }
    }
    try {
        retry_while_busy([&] { store::unfence_shard(source, shard); }, "lifting the fence");
    } catch (const std::exception& e) {
        log::error("the fence of logical shard {} could not be lifted: {} (run the move again)", shard,
                   shown(e.what()));
    }
}

// Ends a release on a source an interrupted move left behind: its rows of the shard deleted,
// the shard no longer hosted, the fence lifted (each step changes nothing when already done).
void finish_release(const std::string& source, int shard, std::chrono::milliseconds connect_wait) {
    auto c = db::sync_connection::connect_with_retry(source, connect_wait);
    const auto hosting = store::read_shard_hosting(c);
    if (hosting && std::find(hosting->hosted.begin(), hosting->hosted.end(), shard) != hosting->hosted.end()) {
        log::warn("{} still holds logical shard {} from an interrupted move; releasing it", shown(source), shard);
        store::release_shard(c, shard);
    }
    retry_while_busy([&] { store::unfence_shard(c, shard); }, "lifting the fence");
}

// Takes up a move of the shard that an earlier run left unfinished (its record on the first
// proxy): once any proxy was repointed, the repoint is completed and the source's release
// finished; before that, a copy left on another target is removed (one on this target is
// removed before the copy). Whether the shard thereby reached this target.
bool take_up_interrupted_move(std::vector<db::sync_connection>& proxies, const std::vector<std::string>& urls,
                              const std::vector<std::string>& mapping, int shard,
                              const std::optional<store::move_record>& earlier, const std::string& target,
                              std::chrono::milliseconds connect_wait) {
    if (!earlier) return false;
    if (mapping[static_cast<std::size_t>(shard)] == earlier->target) {
        for (auto& proxy : proxies)  // the proxies a failed repoint left pointing at the source
            if (store::read_shard_mapping(proxy)[static_cast<std::size_t>(shard)] != earlier->target)
                store::repoint_shard(proxy, shard, earlier->target);
        wait_for_earlier_calls(proxies, urls);
        finish_release(earlier->source, shard, connect_wait);
        for (auto& proxy : proxies) store::forget_move(proxy, shard);
        return earlier->target == target;
    }
    if (earlier->target != target) {
        try {
            db::sync_connection c(earlier->target);
            if (store::read_shard_hosting(c) && store::count_shard_partitions(c, shard) > 0) {
                log::warn("{} holds an unfinished copy of logical shard {}; removing it", shown(earlier->target),
                          shard);
                store::release_shard(c, shard);
            }
        } catch (const std::exception& e) {
            // No call ever reached that copy; it only takes room.
            log::warn(
                "the earlier target {} could not be cleaned ({}); queen.shard_release of logical shard {} there "
                "removes its copy",
                shown(earlier->target), shown(e.what()), shard);
        }
    }
    return false;
}

}  // namespace

shard_move_report move_shard(const shard_move_request& request, std::chrono::milliseconds connect_wait) {
    const int shard = request.logical_shard;
    std::vector<db::sync_connection> proxies;
    for (const auto& url : request.proxies)
        proxies.push_back(db::sync_connection::connect_with_retry(url, connect_wait));
    const auto earlier = store::read_move(proxies[0], shard);
    const auto mapping = agreed_mapping(proxies, request.proxies, shard, earlier);
    const int logical_shards = static_cast<int>(mapping.size());
    if (shard < 0 || shard >= logical_shards)
        throw std::invalid_argument(
            fmt::format("logical shard {} does not exist (the cluster has 0..{})", shard, logical_shards - 1));
    shard_move_report report;
    report.source = mapping[static_cast<std::size_t>(shard)];
    report.target = db::keyword_conninfo(request.target);
    {
        auto probe = db::sync_connection::connect_with_retry(report.target, connect_wait);
        check_move_target(probe, report.target, shard, mapping, proxies, request.proxies);
    }
    if (take_up_interrupted_move(proxies, request.proxies, mapping, shard, earlier, report.target, connect_wait)) {
        report.finished_earlier = true;
        return report;
    }
    if (report.target == report.source)
        throw std::invalid_argument(fmt::format("logical shard {} is already on {}", shard, shown(report.target)));
    std::vector<int> target_hosted;
    for (int s = 0; s < logical_shards; ++s)
        if (mapping[static_cast<std::size_t>(s)] == report.target) target_hosted.push_back(s);
    report.target_new = target_hosted.empty();

    // The target: the schema this binary has, a shard of the same count, nothing of the shard yet.
    report.extension = schema::prepare_shard_schema(report.target, connect_wait);
    auto target = db::sync_connection::connect_with_retry(report.target, connect_wait);
    store::become_shard(target, logical_shards, target_hosted);
    if (store::count_shard_partitions(target, shard) > 0) {
        // A copy an interrupted move made before its repoint: no call reached it.
        log::warn("{} holds an unfinished copy of logical shard {}; removing it and copying again",
                  shown(report.target), shard);
        store::release_shard(target, shard);
    }
    auto source = db::sync_connection::connect_with_retry(report.source, connect_wait);
    schema::prepare_shard_schema(report.source, connect_wait);  // the same migrations on both sides
    const auto tables = store::read_move_tables(source);

    for (auto& proxy : proxies) store::record_move(proxy, shard, {report.source, report.target});
    retry_while_busy([&] { store::fence_shard(source, shard); }, "fencing the logical shard");
    const auto forget_everywhere = [&] {
        for (std::size_t i = 0; i < proxies.size(); ++i) {
            try {
                store::forget_move(proxies[i], shard);
            } catch (const std::exception& e) {
                log::warn("proxy {} keeps the record of the abandoned move: {}", shown(request.proxies[i]),
                          shown(e.what()));
            }
        }
    };
    const auto fenced_at = clock::now();
    bool adopted = false;
    try {
        store::begin(source, true);
        store::begin(target, false);
        report.rows = copy_tables(source, target, shard, tables);
        store::adopt_shard(target, shard);
        store::commit(target);
        adopted = true;
        store::commit(source);
    } catch (...) {
        store::rollback(target);
        store::rollback(source);
        abandon(source, target, shard, adopted);
        forget_everywhere();
        throw;
    }

    std::size_t repointed = 0;
    try {
        for (auto& proxy : proxies) {
            store::repoint_shard(proxy, shard, report.target);
            ++repointed;
        }
    } catch (const std::exception& e) {
        if (repointed == 0) {  // no call reached the target: everything goes back
            abandon(source, target, shard, true);
            forget_everywhere();
            throw;
        }
        // Calls through the repointed proxies may have written to the target: the move can only
        // go forward. The fence keeps the others' calls off the source meanwhile.
        throw std::runtime_error(fmt::format(
            "proxy {} could not be repointed ({}); logical shard {} is on {} for the proxies before it and "
            "fenced on {}: run the same move again to finish it",
            shown(request.proxies[repointed]), e.what(), shard, shown(report.target), shown(report.source)));
    }
    report.fenced = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - fenced_at);
    wait_for_earlier_calls(proxies, request.proxies);

    // Groups registered during the copy (registrations are not fenced: pops update them).
    try {
        store::begin(target, false);
        copy_tables(source, target, shard, {"consumer_groups"});
        store::commit(target);
    } catch (const std::exception& e) {
        store::rollback(target);
        log::warn("consumer groups registered during the move were not copied: {}", shown(e.what()));
    }
    report.partitions = store::release_shard(source, shard);
    retry_while_busy([&] { store::unfence_shard(source, shard); }, "lifting the fence");
    for (auto& proxy : proxies) store::forget_move(proxy, shard);
    return report;
}

}  // namespace queen::app
