// A spool file written by the broker before issue #35 (tests/fixtures/spool-before-issue-35,
// README there) must still read back record for record: the on-disk format is a promise to
// every deployed broker's disk. The fixture is frozen; never regenerate it.
#include "spool/spool_file.hpp"
#include "spool/spool_header.hpp"
#include "spool/spool_record.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <stdlib.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using queen::spool::record;

const fs::path fixture_dir = fs::path(QUEEN_SOURCE_DIR) / "tests" / "fixtures" / "spool-before-issue-35";
const fs::path fixture_file = fixture_dir / "queen-47322.spool";
constexpr unsigned short fixture_port = 47322;
const std::string fixture_database_id = "1b19f322-5879-4858-8b29-d8f8d24d4186";
constexpr std::uint64_t fixture_bytes = 1042;

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

record make(std::string queue, std::string partition, std::string tx, std::optional<std::string> trace,
            std::optional<std::string> producer, std::string payload, std::int64_t at, bool more_follow) {
    record r;
    r.item.queue = std::move(queue);
    r.item.partition = std::move(partition);
    r.item.transaction_id = std::move(tx);
    r.item.trace_id = std::move(trace);
    r.item.producer_sub = std::move(producer);
    r.item.payload = std::move(payload);
    r.accepted_at_us = at;
    r.in_doubt = false;
    r.more_follow = more_follow;
    return r;
}

// What the broker at a1cfbab wrote, in file order (README.md lists the requests).
std::vector<record> expected_records() {
    const std::string long_partition = "customer-0042-eu-west-1-partition-with-a-rather-long-name-for-issue-35";
    const std::string producer = "svc-orders@example.test";
    return {
        make("fixture-orders", long_partition, "fixture-tx-0001", "0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b", producer,
             R"({"lines":[{"qty":2,"sku":"A-1"}],"note":null,"orderId":42})", 1796463836057440, true),
        make("fixture-orders", long_partition, "fixture-tx-0002", std::nullopt, producer, R"("plain string payload")",
             1796463836057440, true),
        make("fixture-orders", long_partition, "fixture-tx-0003", std::nullopt, producer,
             R"({"text":"héllo wörld – 日本語 🚀"})", 1796463836057440, false),
        make("fixture-strings", "Default", "fixture-tx-0004", "0190a3b4-0000-7000-8000-00000000000a", std::nullopt,
             R"("grüße, 世界 ✓")", 1796463836095684, false),
        make("fixture-strings", "p2", "01a24596-bbe1-7c09-8684-319894550d97", std::nullopt, producer, "12345",
             1796463836129036, false),
    };
}

void expect_same(const std::vector<record>& got, const std::vector<record>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("record " + std::to_string(i));
        EXPECT_EQ(got[i].item.queue, want[i].item.queue);
        EXPECT_EQ(got[i].item.partition, want[i].item.partition);
        EXPECT_EQ(got[i].item.transaction_id, want[i].item.transaction_id);
        EXPECT_EQ(got[i].item.trace_id, want[i].item.trace_id);
        EXPECT_EQ(got[i].item.producer_sub, want[i].item.producer_sub);
        EXPECT_EQ(got[i].item.payload, want[i].item.payload);  // byte for byte
        EXPECT_NE(got[i].accepted_at_us, 0);
        EXPECT_EQ(got[i].accepted_at_us, want[i].accepted_at_us);
        EXPECT_EQ(got[i].in_doubt, want[i].in_doubt);
        EXPECT_EQ(got[i].more_follow, want[i].more_follow);
    }
}

TEST(SpoolFixture, ReadsAFileWrittenBeforeIssue35) {
    const std::string bytes = read_bytes(fixture_file);
    ASSERT_EQ(bytes.size(), fixture_bytes) << fixture_file;
    const auto want = expected_records();
    // Sanity of the expectations themselves (the source must be read as UTF-8).
    ASSERT_EQ(want[2].item.payload.size(), 43u);
    ASSERT_EQ(want[3].item.payload.size(), 21u);

    // 1. The bytes, decoded with the pure functions: header, then records to the end.
    const std::string_view data(bytes);
    const auto header = data.substr(0, queen::spool::header_layout::total_bytes);
    const auto identity = queen::spool::decode_identity(header);
    ASSERT_TRUE(identity.has_value());
    EXPECT_EQ(identity->version, 1u);
    EXPECT_EQ(identity->database_id, fixture_database_id);
    const auto checkpoint = queen::spool::latest_checkpoint(header);
    ASSERT_TRUE(checkpoint.has_value());
    EXPECT_EQ(checkpoint->drained, queen::spool::spool_file::header_bytes);
    EXPECT_EQ(checkpoint->inflight, queen::spool::spool_file::header_bytes);

    std::vector<record> decoded;
    std::size_t pos = queen::spool::spool_file::header_bytes;
    for (;;) {
        record r;
        const auto res = queen::spool::decode(data, pos, r);
        if (res.status == queen::spool::read_status::end) break;
        ASSERT_EQ(res.status, queen::spool::read_status::ok) << "at " << pos << ": " << res.why;
        decoded.push_back(r);
        pos = res.next;
    }
    EXPECT_EQ(pos, bytes.size());
    {
        SCOPED_TRACE("spool::decode");
        expect_same(decoded, want);
    }

    // 2. Through the reader the drainer uses, on a copy (opening recovers and may write).
    char tmpl[] = "/tmp/queen-spool-fixture-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    struct cleanup {
        fs::path p;
        ~cleanup() {
            std::error_code ec;
            fs::remove_all(p, ec);
        }
    } remove_dir{dir};
    fs::copy_file(fixture_file, dir / ("queen-" + std::to_string(fixture_port) + ".spool"));

    queen::spool::spool_batch batch;
    {
        queen::spool::spool_file spool(queen::spool::spool_options{dir, fixture_port, fixture_database_id, 0});
        EXPECT_EQ(spool.pending(), want.size()) << spool.recovery_summary();
        EXPECT_TRUE(spool.status().healthy) << spool.status().problem;
        boost::asio::io_context ioc;
        std::exception_ptr failure;
        boost::asio::co_spawn(
            ioc, [&]() -> boost::asio::awaitable<void> { batch = co_await spool.read_batch(1000, 1 << 20); },
            [&failure](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure) std::rethrow_exception(failure);
    }
    EXPECT_EQ(batch.begin, queen::spool::spool_file::header_bytes);
    EXPECT_EQ(batch.end, fixture_bytes);
    {
        SCOPED_TRACE("spool_file::read_batch");
        expect_same(batch.records, want);
    }
    // Nothing was moved aside (foreign or corrupt): the file is this database's and whole.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    EXPECT_EQ(files, 1u);
    EXPECT_EQ(read_bytes(fixture_file), bytes);  // the committed fixture itself is never touched
}

}  // namespace
