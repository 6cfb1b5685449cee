#include "spool/spool_file.hpp"

#include "log/log.hpp"
#include "util/big_endian.hpp"
#include "util/deferred.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace queen::spool {
namespace {

std::string errno_text(int err) {
    return std::strerror(err);
}

bool pwrite_all(int fd, const char* data, std::size_t size, std::uint64_t offset) {
    while (size > 0) {
        ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
    return true;
}

// Reads exactly `size` bytes; false at end of file or on error.
bool pread_all(int fd, char* data, std::size_t size, std::uint64_t offset) {
    while (size > 0) {
        ssize_t n = ::pread(fd, data, size, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
    return true;
}

void fsync_dir(const std::filesystem::path& dir) {
    int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) return;
    ::fsync(d);
    ::close(d);
}

std::string time_suffix() {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

spool_file::spool_file(spool_options options) : options_(std::move(options)) {
    path_ = options_.dir / ("queen-" + std::to_string(options_.port) + ".spool");
    recover();
    thread_ = std::thread([this] { run(); });
}

spool_file::~spool_file() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

spool_status spool_file::status() const {
    spool_status s;
    s.path = path_.string();
    s.pending = pending_.load();
    s.bytes = durable_end_.load();
    std::lock_guard lock(mu_);
    s.healthy = healthy_;
    s.problem = problem_;
    return s;
}

void spool_file::set_problem(std::string problem) {
    std::lock_guard lock(mu_);
    healthy_ = false;
    problem_ = std::move(problem);
}

void spool_file::clear_problem() {
    std::lock_guard lock(mu_);
    if (read_stuck_) return;
    healthy_ = true;
    problem_.clear();
}

// ---- start-up recovery ----------------------------------------------------------------
// Recovery runs in the constructor, before the spool thread: open the file left by the last
// run, check its identity, read its checkpoint, walk its records to the end of the last
// complete request, cut what follows (keeping a copy when it is damage, not a torn append),
// and adopt the file. Each step that gives up sets recovery_summary_ (and the problem).

void spool_file::recover() {
    util::unique_fd fd = open_for_recovery();
    if (!fd) return;
    struct stat st {};
    ::fstat(fd.get(), &st);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    std::string header(header_bytes, '\0');
    const bool readable = size >= header_bytes && pread_all(fd.get(), header.data(), header_bytes, 0);
    if (!accept_identity(fd, size, readable ? std::string_view(header) : std::string_view())) return;
    const checkpoint_slot checkpoint = read_checkpoint(header, size);
    const record_scan scan = scan_records(fd.get(), size, checkpoint.drained);
    if (scan.boundary < size) cut_tail(fd.get(), size, scan);
    adopt(std::move(fd), checkpoint, scan);
}

util::unique_fd spool_file::open_for_recovery() {
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) {
        healthy_ = false;
        problem_ = "cannot create the spool directory " + options_.dir.string() + ": " + ec.message();
        recovery_summary_ = problem_;
        return {};
    }
    if (!std::filesystem::exists(path_, ec)) {
        recovery_summary_ = "empty";
        return {};
    }
    util::unique_fd fd(::open(path_.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) {
        healthy_ = false;
        problem_ = "cannot open " + path_.string() + ": " + errno_text(errno);
        recovery_summary_ = problem_;
        return {};
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
        throw std::runtime_error("spool file " + path_.string() +
                                 " is locked by another process (two brokers must not share a spool file: give each "
                                 "its own QUEEN_SPOOL_DIR or PORT)");
    return fd;
}

bool spool_file::accept_identity(util::unique_fd& fd, std::uint64_t size, std::string_view header) {
    const auto identity = decode_identity(header);
    if (!identity) {
        if (size <= header_bytes) {
            // Interrupted while the file was being created: nothing was ever answered from it.
            fd.reset();
            std::error_code ec;
            std::filesystem::remove(path_, ec);
            fsync_dir(options_.dir);
            recovery_summary_ = "removed an incomplete spool file (interrupted creation)";
            return false;
        }
        move_aside(fd, ".corrupt-" + time_suffix(), "the spool file header is damaged");
        return false;
    }
    if (identity->version != spool_file_version) {
        move_aside(fd, ".unknown-version-" + time_suffix(),
                   "the spool file has an unknown version " + std::to_string(identity->version));
        return false;
    }
    const std::string& file_db = identity->database_id;
    if (!options_.database_id.empty() && !file_db.empty() && file_db != options_.database_id) {
        move_aside(
            fd, ".foreign-" + file_db + "-" + time_suffix(),
            "the spool file was written for database " + file_db + ", not for this one (" + options_.database_id + ")");
        return false;
    }
    return true;
}

void spool_file::move_aside(util::unique_fd& fd, const std::string& suffix, const std::string& why) {
    fd.reset();
    auto aside = path_;
    aside += suffix;
    std::error_code mv;
    std::filesystem::rename(path_, aside, mv);
    fsync_dir(options_.dir);
    log::error("spool: {}; moved {} to {}{}", why, path_.string(), aside.string(),
               mv ? " FAILED: " + mv.message() : std::string());
    if (mv) {
        healthy_ = false;
        problem_ = why + " and the file could not be moved aside";
    }
    recovery_summary_ = why + "; moved aside to " + aside.string();
}

checkpoint_slot spool_file::read_checkpoint(std::string_view header, std::uint64_t size) {
    if (auto slot = latest_checkpoint(header)) return *slot;
    log::warn("spool: no valid checkpoint in {}; every record will be probed", path_.string());
    return checkpoint_slot{0, header_bytes, size};  // everything in doubt
}

spool_file::record_scan spool_file::scan_records(int fd, std::uint64_t size, std::uint64_t drained) {
    record_scan scan;
    std::uint64_t& pos = scan.stopped_at;
    pos = scan.boundary = header_bytes;
    std::uint64_t records_pending = 0;
    std::string body;
    while (pos != size) {
        char head[record_header_bytes];
        if (size - pos < record_header_bytes || !pread_all(fd, head, record_header_bytes, pos)) {
            scan.why_stop = "record header is incomplete";
            break;
        }
        const std::uint32_t length = util::load_be32(head), checksum = util::load_be32(head + 4);
        if (length > max_record_body || length > size - pos - record_header_bytes) {
            scan.why_stop = "record runs past the end of the file";
            scan.damaged_inside = length > max_record_body && length <= size - pos - record_header_bytes;
            break;
        }
        body.resize(length);
        if (!pread_all(fd, body.data(), length, pos + record_header_bytes)) {
            scan.why_stop = "cannot read a record: " + errno_text(errno);
            scan.damaged_inside = true;
            break;
        }
        record r;
        const auto res = decode_body(body, checksum, r);
        const std::uint64_t next = pos + record_header_bytes + length;
        if (res.status != read_status::ok) {
            scan.why_stop = res.why;
            // A bad last record is a torn append; one followed by more bytes is damage.
            scan.damaged_inside = next < size;
            break;
        }
        if (pos >= drained) ++records_pending;
        pos = next;
        if (!r.more_follow) {
            scan.boundary = pos;
            scan.pending_at_boundary = records_pending;
        }
    }
    return scan;
}

void spool_file::cut_tail(int fd, std::uint64_t size, const record_scan& scan) {
    const std::uint64_t cut = size - scan.boundary;
    if (scan.damaged_inside) {
        auto aside = path_;
        aside += ".corrupt-" + time_suffix();
        std::string rest(static_cast<std::size_t>(cut), '\0');
        bool saved = pread_all(fd, rest.data(), rest.size(), scan.boundary);
        if (saved) {
            util::unique_fd out(::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
            saved = out && pwrite_all(out.get(), rest.data(), rest.size(), 0) && ::fsync(out.get()) == 0;
        }
        log::error("spool: {} is damaged at byte {} ({}); the {} bytes from there {} and are not drained",
                   path_.string(), scan.stopped_at, scan.why_stop, cut,
                   saved ? "were copied to " + aside.string() : std::string("could NOT be saved"));
    } else {
        log::warn("spool: dropped a torn tail of {} bytes at byte {} of {} ({}); it was never answered", cut,
                  scan.boundary, path_.string(), scan.why_stop);
    }
    if (::ftruncate(fd, static_cast<off_t>(scan.boundary)) != 0 || ::fdatasync(fd) != 0)
        throw std::runtime_error("spool: cannot cut the damaged tail of " + path_.string() + ": " + errno_text(errno));
}

void spool_file::adopt(util::unique_fd fd, const checkpoint_slot& checkpoint, const record_scan& scan) {
    const std::uint64_t drained = std::clamp(checkpoint.drained, header_bytes, scan.boundary);
    const std::uint64_t inflight = std::clamp(checkpoint.inflight, drained, scan.boundary);
    fd_ = std::move(fd);
    checkpoint_seq_ = checkpoint.seq;
    durable_end_ = scan.boundary;
    drained_end_ = drained;
    inflight_end_ = inflight;
    pending_ = scan.pending_at_boundary;
    if (scan.pending_at_boundary == 0) {
        remove_file();
        recovery_summary_ = "empty (a fully drained file was removed)";
        return;
    }
    recovery_summary_ = std::to_string(scan.pending_at_boundary) + " record(s) to drain" +
                        (inflight > drained ? " (those of an interrupted drain will be probed)" : "");
}

// ---- the spool thread -----------------------------------------------------------------

void spool_file::run() {
    for (;;) {
        std::vector<append_request> appends;
        std::deque<std::function<void()>> jobs;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [this] { return stop_ || !appends_.empty() || !jobs_.empty(); });
            if (stop_ && appends_.empty() && jobs_.empty()) return;
            appends.swap(appends_);
            jobs.swap(jobs_);
        }
        if (!appends.empty()) write_appends(appends);
        for (auto& job : jobs) job();
    }
}

void spool_file::submit(std::function<void()> job) {
    {
        std::lock_guard lock(mu_);
        jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
}

void spool_file::append(std::vector<record> records, std::function<void(std::exception_ptr)> done) {
    if (records.empty()) {
        done(nullptr);
        return;
    }
    append_request req;
    req.count = records.size();
    try {
        for (std::size_t i = 0; i < records.size(); ++i) {
            records[i].more_follow = i + 1 < records.size();
            encode(records[i], req.bytes);
        }
    } catch (const std::exception& e) {
        done(std::make_exception_ptr(spool_error(std::string("cannot spool this push: ") + e.what(), false)));
        return;
    }
    req.done = std::move(done);
    {
        std::lock_guard lock(mu_);
        pending_ += req.count;
        appends_.push_back(std::move(req));
    }
    cv_.notify_one();
}

bool spool_file::ensure_open(std::string& why) {
    if (fd_) return true;
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) {
        why = "cannot create the spool directory " + options_.dir.string() + ": " + ec.message();
        return false;
    }
    util::unique_fd fd(::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) {
        why = "cannot create " + path_.string() + ": " + errno_text(errno);
        return false;
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        why = "cannot lock " + path_.string() + ": " + errno_text(errno);
        return false;
    }
    const std::string head = encode_header(options_.database_id, checkpoint_slot{1, header_bytes, header_bytes});
    if (!pwrite_all(fd.get(), head.data(), head.size(), 0) || ::fdatasync(fd.get()) != 0) {
        why = "cannot write " + path_.string() + ": " + errno_text(errno);
        fd.reset();
        std::filesystem::remove(path_, ec);
        return false;
    }
    fsync_dir(options_.dir);
    fd_ = std::move(fd);
    checkpoint_seq_ = 1;
    drained_end_ = inflight_end_ = header_bytes;
    durable_end_ = header_bytes;
    read_stuck_ = false;
    return true;
}

void spool_file::write_appends(std::vector<append_request>& requests) {
    auto fail = [this](append_request& r, const std::string& why, bool full) {
        {
            std::lock_guard lock(mu_);
            pending_ -= r.count;
        }
        r.done(std::make_exception_ptr(spool_error(why, full)));
    };
    std::string why;
    if (!ensure_open(why)) {
        set_problem(why);
        log::error("spool: {}", why);
        for (auto& r : requests) fail(r, why, false);
        return;
    }
    const std::uint64_t start = durable_end_.load();
    std::string buffer;
    std::vector<append_request*> included;
    for (auto& r : requests) {
        if (options_.max_bytes > 0 && start + buffer.size() + r.bytes.size() > options_.max_bytes) {
            fail(r, "the spool is full (QUEEN_SPOOL_MAX_BYTES=" + std::to_string(options_.max_bytes) + ")", true);
            continue;
        }
        if (buffer.empty())
            buffer = std::move(r.bytes);
        else
            buffer += r.bytes;
        included.push_back(&r);
    }
    if (included.empty()) return;
    if (!pwrite_all(fd_.get(), buffer.data(), buffer.size(), start) || ::fdatasync(fd_.get()) != 0) {
        int err = errno;
        why = "cannot write to " + path_.string() + ": " + errno_text(err);
        // Take the partial write back, so that later records do not follow garbage.
        if (::ftruncate(fd_.get(), static_cast<off_t>(start)) != 0) why += " (and cannot cut the partial write back)";
        set_problem(why);
        log::error("spool: {}", why);
        for (auto* r : included) fail(*r, why, false);
        return;
    }
    durable_end_ = start + buffer.size();
    clear_problem();
    for (auto* r : included) r->done(nullptr);
}

void spool_file::write_checkpoint(std::uint64_t drained, std::uint64_t inflight) {
    if (!fd_) return;
    const std::uint64_t seq = checkpoint_seq_ + 1;
    const std::string slot = encode_slot(checkpoint_slot{seq, drained, inflight});
    if (!pwrite_all(fd_.get(), slot.data(), slot.size(), slot_offset(seq)) || ::fdatasync(fd_.get()) != 0)
        throw spool_error("cannot write the spool checkpoint: " + errno_text(errno), false);
    checkpoint_seq_ = seq;
}

spool_batch spool_file::do_read_batch(std::size_t max_records, std::size_t max_bytes) {
    spool_batch batch;
    batch.begin = batch.end = drained_end_;
    if (!fd_ || read_stuck_) return batch;
    const std::uint64_t end = durable_end_.load();
    std::uint64_t pos = drained_end_;
    std::size_t bytes = 0, whole = 0;
    std::string body;
    while (pos < end) {
        char head[record_header_bytes];
        if (!pread_all(fd_.get(), head, record_header_bytes, pos)) {
            set_problem("cannot read the spool at byte " + std::to_string(pos) + ": " + errno_text(errno));
            break;
        }
        std::uint32_t length = util::load_be32(head), checksum = util::load_be32(head + 4);
        record r;
        read_result res;
        if (length > max_record_body || pos + record_header_bytes + length > end) {
            res.status = read_status::corrupt;
            res.why = "record length out of range";
        } else {
            body.resize(length);
            if (!pread_all(fd_.get(), body.data(), length, pos + record_header_bytes)) {
                res.status = read_status::corrupt;
                res.why = "cannot read: " + errno_text(errno);
            } else {
                res = decode_body(body, checksum, r);
            }
        }
        if (res.status != read_status::ok) {
            std::string why = "damaged record at byte " + std::to_string(pos) + " of " + path_.string() + ": " +
                              res.why + "; the drain stops here (see docs/maintenance-and-spool.md)";
            log::error("spool: {}", why);
            set_problem(why);
            {
                std::lock_guard lock(mu_);
                read_stuck_ = true;
            }
            break;
        }
        r.in_doubt = r.in_doubt || pos < inflight_end_;
        pos += record_header_bytes + length;
        bytes += length;
        bool last_of_request = !r.more_follow;
        batch.records.push_back(std::move(r));
        if (last_of_request) {
            whole = batch.records.size();
            batch.end = pos;
            if (whole >= max_records || bytes >= max_bytes) break;
        }
    }
    batch.records.resize(whole);
    return batch;
}

void spool_file::do_mark_drained(std::uint64_t end, std::size_t count) {
    drained_end_ = end;
    inflight_end_ = std::max(inflight_end_, end);
    std::exception_ptr failure;
    try {
        write_checkpoint(drained_end_, inflight_end_);
    } catch (const std::exception& e) {
        // The batch is committed; the last checkpoint still marks it in doubt, so a restart
        // probes it instead of storing it twice.
        log::warn("spool: {}", e.what());
    }
    bool empty = false;
    {
        std::lock_guard lock(mu_);
        pending_ -= count;
        empty = pending_ == 0 && drained_end_ == durable_end_.load();
    }
    if (empty) remove_file();
}

void spool_file::remove_file() {
    if (!fd_) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    if (ec) log::warn("spool: cannot remove the drained file {}: {}", path_.string(), ec.message());
    fsync_dir(options_.dir);
    fd_.reset();  // releases the lock
    drained_end_ = inflight_end_ = 0;
    durable_end_ = 0;
    checkpoint_seq_ = 0;
}

// ---- awaitable wrappers ---------------------------------------------------------------

boost::asio::awaitable<void> spool_file::append(std::vector<record> records) {
    auto shared = std::make_shared<std::vector<record>>(std::move(records));
    std::function<void(util::completer<bool>)> start = [this, shared](util::completer<bool> done) {
        append(std::move(*shared), [done](std::exception_ptr e) { done(e, true); });
    };
    co_await util::await_completion<bool>(std::move(start));
}

boost::asio::awaitable<spool_batch> spool_file::read_batch(std::size_t max_records, std::size_t max_bytes) {
    std::function<void(util::completer<spool_batch>)> start = [this, max_records,
                                                               max_bytes](util::completer<spool_batch> done) {
        submit([this, max_records, max_bytes, done] {
            spool_batch b;
            std::exception_ptr e;
            try {
                b = do_read_batch(max_records, max_bytes);
            } catch (...) {
                e = std::current_exception();
            }
            done(e, std::move(b));
        });
    };
    auto batch = co_await util::await_completion<spool_batch>(std::move(start));
    co_return batch;
}

boost::asio::awaitable<void> spool_file::mark_inflight(std::uint64_t end) {
    std::function<void(util::completer<bool>)> start = [this, end](util::completer<bool> done) {
        submit([this, end, done] {
            std::exception_ptr e;
            try {
                inflight_end_ = std::max(inflight_end_, end);
                write_checkpoint(drained_end_, inflight_end_);
            } catch (...) {
                e = std::current_exception();
            }
            done(e, true);
        });
    };
    co_await util::await_completion<bool>(std::move(start));
}

boost::asio::awaitable<void> spool_file::mark_drained(std::uint64_t end, std::size_t count) {
    std::function<void(util::completer<bool>)> start = [this, end, count](util::completer<bool> done) {
        submit([this, end, count, done] {
            std::exception_ptr e;
            try {
                do_mark_drained(end, count);
            } catch (...) {
                e = std::current_exception();
            }
            done(e, true);
        });
    };
    co_await util::await_completion<bool>(std::move(start));
}

}  // namespace queen::spool
