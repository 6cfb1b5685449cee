#pragma once
// The broker's spool (docs/maintenance-and-spool.md): one fsync'd file per broker,
// <QUEEN_SPOOL_DIR>/queen-<port>.spool, that takes pushes during push maintenance and while
// PostgreSQL is unreachable, and gives them back, in file order, to the drainer.
//
// File: a 192-byte header (magic, version, the database identity, two checkpoint slots)
// then records (spool_record.hpp), each push request's records written together. A push is
// answered only after its records are written and fdatasync'd ("group commit": the records
// of concurrent requests share one write and one fdatasync). The file exists only while
// something is spooled: it is created by the first append and removed once every record is
// drained and committed.
//
// Checkpoint: before the drainer sends a batch it records [drained, inflight) in a slot
// (fdatasync); after the commit, [end, end). After a crash the records in
// [drained, inflight) are "in doubt" (they may be committed) and are probed by the drain.
// The two slots are written alternately, each with a sequence number and a checksum, so a
// torn slot write falls back to the previous (more conservative) one.
//
// Recovery at start: a torn tail (an interrupted append, never answered) is cut off, and
// so is an incomplete push request at the end; a damaged record inside the file ends the
// readable part — everything from there is copied to <file>.corrupt-<time> and cut off,
// and reported as an error. A file written for another database is moved aside to
// <file>.foreign-<database id>-<time> (never drained into the wrong database).
//
// All file I/O runs on one private thread; the awaitable functions may be called from any
// coroutine and resume on its executor.
#include "spool/spool_header.hpp"
#include "spool/spool_record.hpp"
#include "util/unique_fd.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace queen::spool {

struct spool_options {
    std::filesystem::path dir;    // QUEEN_SPOOL_DIR
    unsigned short port = 0;      // names the file: one spool per broker
    std::string database_id;      // recorded in the header; "" = unknown (not checked)
    std::uint64_t max_bytes = 0;  // file size limit; 0 = unlimited
};

// An append that could not be made durable (disk error, size limit).
class spool_error : public std::runtime_error {
public:
    spool_error(std::string message, bool full) : std::runtime_error(std::move(message)), full_(full) {}
    bool full() const noexcept { return full_; }

private:
    bool full_;
};

// Records handed to the drainer: whole push requests, in file order.
struct spool_batch {
    std::uint64_t begin = 0;      // file position of the first record
    std::uint64_t end = 0;        // position after the last one
    std::vector<record> records;  // in_doubt is set for every record that must be probed
};

struct spool_status {
    std::string path;
    std::uint64_t pending = 0;  // records accepted and not yet drained
    std::uint64_t bytes = 0;    // size of the file (0: no file)
    bool healthy = true;        // the last write (or the start-up check) succeeded
    std::string problem;        // why not healthy
};

class spool_file {
public:
    static constexpr std::uint64_t header_bytes = header_layout::total_bytes;

    // Opens (and recovers) an existing spool file. Throws std::runtime_error when the file
    // is locked by another process (two brokers must not share one spool file).
    explicit spool_file(spool_options options);
    ~spool_file();
    spool_file(const spool_file&) = delete;
    spool_file& operator=(const spool_file&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    std::uint64_t pending() const noexcept { return pending_.load(); }
    spool_status status() const;
    // What recovery found at start (for the start-up log line).
    const std::string& recovery_summary() const noexcept { return recovery_summary_; }

    // Appends one push request's records durably; throws spool_error. The records' order
    // is kept; more_follow is set here.
    boost::asio::awaitable<void> append(std::vector<record> records);
    // The next whole requests after the drained position, up to about the limits (a single
    // request is never split). Empty when nothing is pending.
    boost::asio::awaitable<spool_batch> read_batch(std::size_t max_records, std::size_t max_bytes);
    // Notes that the records up to `end` are being sent (they are in doubt until drained).
    boost::asio::awaitable<void> mark_inflight(std::uint64_t end);
    // Notes that the batch is committed in PostgreSQL; removes the file when nothing is left.
    boost::asio::awaitable<void> mark_drained(std::uint64_t end, std::size_t count);

    // Callback forms of the above (the completion runs on the spool's thread).
    void append(std::vector<record> records, std::function<void(std::exception_ptr)> done);
    void submit(std::function<void()> job);

private:
    struct append_request {
        std::string bytes;
        std::size_t count = 0;
        std::function<void(std::exception_ptr)> done;
    };

    // What a walk over the records found (recovery).
    struct record_scan {
        std::uint64_t boundary = 0;             // end of the last complete request
        std::uint64_t stopped_at = 0;           // where the walk stopped
        std::uint64_t pending_at_boundary = 0;  // records past the checkpoint, up to boundary
        bool damaged_inside = false;            // the stop is damage, not a torn last append
        std::string why_stop;
    };

    void recover();
    util::unique_fd open_for_recovery();
    bool accept_identity(util::unique_fd& fd, std::uint64_t size, std::string_view header);
    void move_aside(util::unique_fd& fd, const std::string& suffix, const std::string& why);
    checkpoint_slot read_checkpoint(std::string_view header, std::uint64_t size);
    record_scan scan_records(int fd, std::uint64_t size, std::uint64_t drained);
    void cut_tail(int fd, std::uint64_t size, const record_scan& scan);
    void adopt(util::unique_fd fd, const checkpoint_slot& checkpoint, const record_scan& scan);
    void run();
    void write_appends(std::vector<append_request>& requests);
    bool ensure_open(std::string& why);
    void write_checkpoint(std::uint64_t drained, std::uint64_t inflight);
    spool_batch do_read_batch(std::size_t max_records, std::size_t max_bytes);
    void do_mark_drained(std::uint64_t end, std::size_t count);
    void remove_file();
    void set_problem(std::string problem);
    void clear_problem();

    spool_options options_;
    std::filesystem::path path_;
    std::string recovery_summary_;

    // Owned by the spool thread (and the constructor before it starts).
    util::unique_fd fd_;
    std::uint64_t drained_end_ = 0;
    std::uint64_t inflight_end_ = 0;
    std::uint64_t checkpoint_seq_ = 0;
    bool read_stuck_ = false;

    std::atomic<std::uint64_t> durable_end_{0};
    std::atomic<std::uint64_t> pending_{0};

    mutable std::mutex mu_;  // guards the queues, pending_ transitions, problem_
    std::condition_variable cv_;
    std::vector<append_request> appends_;
    std::deque<std::function<void()>> jobs_;
    bool stop_ = false;
    bool healthy_ = true;
    std::string problem_;
    std::thread thread_;
};

}  // namespace queen::spool
