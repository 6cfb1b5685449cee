// The spool's record format and file recovery (broker/spool/); no database needed.
#include "config/config.hpp"
#include "spool/spool_file.hpp"
#include "spool/spool_record.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using queen::spool::decode;
using queen::spool::encode;
using queen::spool::read_status;
using queen::spool::record;
using queen::spool::spool_batch;
using queen::spool::spool_file;
using queen::spool::spool_options;

record sample(int i) {
    record r;
    r.item.queue = "orders";
    r.item.partition = "customer-" + std::to_string(i % 3);
    r.item.transaction_id = "tx-" + std::to_string(i);
    if (i % 2) r.item.trace_id = "0191d3c4-5b6a-7c8d-9e0f-112233445566";
    if (i % 3 == 0) r.item.producer_sub = "svc-" + std::to_string(i);
    r.item.payload = R"({"n":)" + std::to_string(i) + R"(,"text":"héllo \"world\""})";
    r.accepted_at_us = 1'760'000'000'000'000 + i;
    r.in_doubt = i % 4 == 1;
    r.more_follow = i % 5 == 2;
    return r;
}

std::vector<record> decode_all(std::string_view data, read_status& last) {
    std::vector<record> out;
    std::size_t pos = 0;
    for (;;) {
        record r;
        auto res = decode(data, pos, r);
        last = res.status;
        if (res.status != read_status::ok) break;
        out.push_back(r);
        pos = res.next;
    }
    return out;
}

TEST(SpoolRecord, Crc32cMatchesTheStandardCheckValue) {
    const std::string check = "123456789";
    EXPECT_EQ(queen::spool::crc32c(check.data(), check.size()), 0xE3069283u);
    EXPECT_EQ(queen::spool::crc32c("", 0), 0u);
}

TEST(SpoolRecord, RoundTripKeepsEveryField) {
    std::string data;
    std::vector<record> in;
    for (int i = 0; i < 12; ++i) {
        in.push_back(sample(i));
        encode(in.back(), data);
    }
    record empty;  // every string empty, no optional field, time 0
    empty.item.transaction_id = "x";
    in.push_back(empty);
    encode(empty, data);
    record big = sample(99);
    big.item.payload.assign(1 << 20, 'a');  // 1 MiB of payload
    big.item.payload.front() = '"';
    big.item.payload.back() = '"';
    in.push_back(big);
    encode(big, data);

    read_status last{};
    auto out = decode_all(data, last);
    EXPECT_EQ(last, read_status::end);
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i]) << "record " << i;
}

TEST(SpoolRecord, EveryTruncationOfTheLastRecordIsATornTail) {
    std::string data;
    encode(sample(1), data);
    encode(sample(2), data);
    const std::size_t whole = data.size();
    encode(sample(3), data);
    for (std::size_t cut = whole + 1; cut < data.size(); ++cut) {
        read_status last{};
        auto out = decode_all(std::string_view(data).substr(0, cut), last);
        EXPECT_EQ(out.size(), 2u) << "cut at " << cut;
        EXPECT_EQ(last, read_status::torn) << "cut at " << cut;
    }
}

TEST(SpoolRecord, ADamagedByteIsACorruptRecord) {
    std::string data;
    encode(sample(1), data);
    const std::size_t second = data.size();
    encode(sample(2), data);
    const std::size_t third = data.size();
    encode(sample(3), data);
    // Every byte of the second record's checksum and body, flipped in turn.
    for (std::size_t at = second + 4; at < third; ++at) {
        std::string bad = data;
        bad[at] = static_cast<char>(bad[at] ^ 0x20);
        record r;
        auto first = decode(bad, 0, r);
        ASSERT_EQ(first.status, read_status::ok);
        auto res = decode(bad, first.next, r);
        EXPECT_EQ(res.status, read_status::corrupt) << "byte " << at;
        EXPECT_FALSE(res.why.empty());
    }
    // A length that still fits in the data but is wrong: the checksum fails.
    std::string bad = data;
    bad[second + 3] = static_cast<char>(bad[second + 3] - 1);
    record r;
    EXPECT_EQ(decode(bad, second, r).status, read_status::corrupt);
}

TEST(SpoolRecord, OverlongFieldsAreRefused) {
    record r = sample(1);
    r.item.queue.assign(70000, 'q');
    std::string out;
    EXPECT_THROW(encode(r, out), std::length_error);
}

TEST(SpoolConfig, DirectoryLimitAndRefreshAreReadAndPrinted) {
    auto c = queen::config::from_map({{"QUEEN_SPOOL_DIR", "/data/spool"},
                                      {"QUEEN_SPOOL_MAX_BYTES", "0"},
                                      {"QUEEN_MAINTENANCE_REFRESH_MS", "250"}});
    EXPECT_EQ(c.spool_dir, "/data/spool");
    EXPECT_EQ(c.spool_max_bytes, 0u);
    EXPECT_EQ(c.maintenance_refresh.count(), 250);
    EXPECT_NE(queen::config::describe(c).find("spool_dir=/data/spool (QUEEN_SPOOL_DIR)"), std::string::npos);
    auto d = queen::config::from_map({{"HOME", "/home/someone"}});
    EXPECT_EQ(d.spool_max_bytes, 1ull << 30);
    EXPECT_EQ(d.maintenance_refresh.count(), 1000);
    EXPECT_EQ(d.spool_dir, ::geteuid() == 0 ? "/var/lib/queen/spool" : "/home/someone/.local/share/queen/spool");
    EXPECT_THROW(queen::config::from_map({{"QUEEN_SPOOL_MAX_BYTES", "-1"}}), std::invalid_argument);
    EXPECT_THROW(queen::config::from_map({{"QUEEN_MAINTENANCE_REFRESH_MS", "5"}}), std::invalid_argument);
}

// ---- the file ---------------------------------------------------------------------------

class SpoolFile : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/queen-spool-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    spool_options options(const std::string& db = "db-1") const { return spool_options{dir_, 7000, db, 0}; }
    fs::path file() const { return dir_ / "queen-7000.spool"; }

    // Appends one request of records with ids [from, to) and waits until it is durable.
    static void append(spool_file& s, int from, int to) {
        std::vector<record> rs;
        for (int i = from; i < to; ++i) rs.push_back(sample(i));
        std::promise<std::exception_ptr> done;
        s.append(std::move(rs), [&done](std::exception_ptr e) { done.set_value(e); });
        auto e = done.get_future().get();
        if (e) std::rethrow_exception(e);
    }

    // Runs a coroutine of the spool to completion.
    template <typename F>
    static void run(F body) {
        boost::asio::io_context ioc;
        std::exception_ptr failure;
        boost::asio::co_spawn(ioc, body(), [&failure](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure) std::rethrow_exception(failure);
    }

    static spool_batch read(spool_file& s, std::size_t max_records = 1000) {
        spool_batch out;
        run([&]() -> boost::asio::awaitable<void> {
            out = co_await s.read_batch(max_records, 1 << 20);
        });
        return out;
    }

    fs::path dir_;
};

TEST_F(SpoolFile, NoFileUntilSomethingIsSpooledAndNoneAfterTheDrain) {
    spool_file s(options());
    EXPECT_EQ(s.pending(), 0u);
    EXPECT_FALSE(fs::exists(file()));
    append(s, 0, 3);
    append(s, 3, 4);
    EXPECT_TRUE(fs::exists(file()));
    EXPECT_EQ(s.pending(), 4u);
    auto b = read(s);
    ASSERT_EQ(b.records.size(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(b.records[static_cast<std::size_t>(i)].item.transaction_id, "tx-" + std::to_string(i));
    EXPECT_TRUE(b.records[0].more_follow);
    EXPECT_FALSE(b.records[2].more_follow);
    EXPECT_FALSE(b.records[3].more_follow);
    run([&]() -> boost::asio::awaitable<void> {
        co_await s.mark_inflight(b.end);
        co_await s.mark_drained(b.end, b.records.size());
    });
    EXPECT_EQ(s.pending(), 0u);
    EXPECT_FALSE(fs::exists(file()));
    EXPECT_TRUE(s.status().healthy);
}

TEST_F(SpoolFile, BatchesNeverSplitARequest) {
    spool_file s(options());
    append(s, 0, 5);
    append(s, 5, 6);
    auto b = read(s, 2);
    EXPECT_EQ(b.records.size(), 5u);  // the first request whole, although over the limit
}

TEST_F(SpoolFile, ARestartFindsTheRecordsThatWereNotDrained) {
    {
        spool_file s(options());
        append(s, 0, 2);
        append(s, 2, 5);
        auto b = read(s, 1);
        ASSERT_EQ(b.records.size(), 2u);
        run([&]() -> boost::asio::awaitable<void> {
            co_await s.mark_inflight(b.end);
            co_await s.mark_drained(b.end, b.records.size());
        });
    }
    spool_file again(options());
    EXPECT_EQ(again.pending(), 3u);
    auto b = read(again);
    ASSERT_EQ(b.records.size(), 3u);
    EXPECT_EQ(b.records[0].item.transaction_id, "tx-2");
    for (const auto& r : b.records) EXPECT_EQ(r.in_doubt, sample(std::stoi(r.item.transaction_id.substr(3))).in_doubt);
}

TEST_F(SpoolFile, AnInterruptedDrainLeavesItsRecordsInDoubt) {
    {
        spool_file s(options());
        append(s, 4, 6);  // sample(4), sample(5): 5 is in doubt by itself, 4 is not
        append(s, 8, 9);
        auto b = read(s, 1);
        ASSERT_EQ(b.records.size(), 2u);
        run([&]() -> boost::asio::awaitable<void> { co_await s.mark_inflight(b.end); });
        // killed here: the batch may or may not have committed
    }
    spool_file again(options());
    EXPECT_EQ(again.pending(), 3u);
    auto b = read(again);
    ASSERT_EQ(b.records.size(), 3u);
    EXPECT_TRUE(b.records[0].in_doubt);
    EXPECT_TRUE(b.records[1].in_doubt);
    EXPECT_FALSE(b.records[2].in_doubt);  // after the interrupted batch
}

TEST_F(SpoolFile, ATornTailIsDroppedWithItsWholeRequest) {
    {
        spool_file s(options());
        append(s, 0, 2);
        append(s, 2, 5);
    }
    // Cut into the last record: the first two records of that request are complete but the
    // request never was answered, so none of it may be drained.
    auto size = fs::file_size(file());
    fs::resize_file(file(), size - 3);
    spool_file again(options());
    EXPECT_EQ(again.pending(), 2u);
    auto b = read(again);
    ASSERT_EQ(b.records.size(), 2u);
    EXPECT_EQ(b.records[1].item.transaction_id, "tx-1");
    // The file was cut back to the last whole request; later appends follow it cleanly.
    append(again, 10, 11);
    EXPECT_EQ(read(again).records.size(), 3u);
}

TEST_F(SpoolFile, ACorruptRecordInsideTheFileEndsItAndTheRestIsKeptAside) {
    std::uintmax_t first_end = 0;
    {
        spool_file s(options());
        append(s, 0, 1);
        first_end = fs::file_size(file());
        append(s, 1, 2);
        append(s, 2, 3);
    }
    {
        std::fstream f(file(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(first_end + 12));
        f.put('\x7f');
    }
    spool_file again(options());
    EXPECT_EQ(again.pending(), 1u);
    bool kept = false;
    for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().filename().string().find(".corrupt-") != std::string::npos) kept = true;
    EXPECT_TRUE(kept);
}

TEST_F(SpoolFile, AFileOfAnotherDatabaseIsMovedAsideNotDrained) {
    {
        spool_file s(options("db-1"));
        append(s, 0, 2);
    }
    spool_file other(options("db-2"));
    EXPECT_EQ(other.pending(), 0u);
    EXPECT_FALSE(fs::exists(file()));
    bool kept = false;
    for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().filename().string().find(".foreign-db-1-") != std::string::npos) kept = true;
    EXPECT_TRUE(kept);
}

TEST_F(SpoolFile, TheSizeLimitRefusesAppendsWithoutDamage) {
    spool_options o = options();
    o.max_bytes = spool_file::header_bytes + 400;
    spool_file s(o);
    append(s, 0, 1);
    EXPECT_THROW(
        {
            for (int i = 1; i < 20; ++i) append(s, i, i + 1);
        },
        queen::spool::spool_error);
    auto pending = s.pending();
    EXPECT_GE(pending, 1u);
    EXPECT_EQ(read(s).records.size(), pending);
}

TEST_F(SpoolFile, TwoSpoolsCannotShareOneFile) {
    spool_file s(options());
    append(s, 0, 1);
    EXPECT_THROW(spool_file second{options()}, std::runtime_error);
}

}  // namespace
