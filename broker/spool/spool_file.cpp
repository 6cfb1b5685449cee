#include "spool/spool_file.hpp"

#include "core/deferred.hpp"
#include "log/log.hpp"

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

constexpr char magic[8] = {'Q', 'N', 'S', 'P', 'O', 'O', 'L', '1'};
constexpr std::uint32_t file_version = 1;
constexpr std::size_t slot_bytes = 64;
constexpr std::size_t slot_offset = 64;
constexpr std::size_t db_id_bytes = 40;

void store_u32(char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
}
void store_u64(char* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (56 - 8 * i));
}
std::uint32_t load_u32(const char* p) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
    return v;
}
std::uint64_t load_u64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
    return v;
}

std::string errno_text(int err) { return std::strerror(err); }

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

std::string header_bytes_for(const std::string& database_id) {
    std::string h(spool_file::header_bytes, '\0');
    std::memcpy(h.data(), magic, sizeof magic);
    store_u32(h.data() + 8, file_version);
    store_u32(h.data() + 12, static_cast<std::uint32_t>(spool_file::header_bytes));
    std::memcpy(h.data() + 16, database_id.data(), std::min(database_id.size(), db_id_bytes));
    store_u32(h.data() + 60, crc32c(h.data(), 60));
    return h;
}

std::string slot_bytes_for(std::uint64_t seq, std::uint64_t drained, std::uint64_t inflight) {
    std::string s(slot_bytes, '\0');
    store_u64(s.data(), seq);
    store_u64(s.data() + 8, drained);
    store_u64(s.data() + 16, inflight);
    store_u32(s.data() + 60, crc32c(s.data(), 60));
    return s;
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
    if (fd_ >= 0) ::close(fd_);
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

void spool_file::recover() {
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) {
        healthy_ = false;
        problem_ = "cannot create the spool directory " + options_.dir.string() + ": " + ec.message();
        recovery_summary_ = problem_;
        return;
    }
    if (!std::filesystem::exists(path_, ec)) {
        recovery_summary_ = "empty";
        return;
    }
    int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        healthy_ = false;
        problem_ = "cannot open " + path_.string() + ": " + errno_text(errno);
        recovery_summary_ = problem_;
        return;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        throw std::runtime_error("spool file " + path_.string() +
                                 " is locked by another process (two brokers must not share a spool file: give each "
                                 "its own QUEEN_SPOOL_DIR or PORT)");
    }
    struct stat st {};
    ::fstat(fd, &st);
    const auto size = static_cast<std::uint64_t>(st.st_size);

    auto move_aside = [&](const std::string& suffix, const std::string& why) {
        ::close(fd);
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
    };

    std::string header(header_bytes, '\0');
    bool header_ok = size >= header_bytes && pread_all(fd, header.data(), header_bytes, 0) &&
                     std::memcmp(header.data(), magic, sizeof magic) == 0 &&
                     load_u32(header.data() + 60) == crc32c(header.data(), 60);
    if (!header_ok) {
        if (size <= header_bytes) {
            // Interrupted while the file was being created: nothing was ever answered from it.
            ::close(fd);
            std::filesystem::remove(path_, ec);
            fsync_dir(options_.dir);
            recovery_summary_ = "removed an incomplete spool file (interrupted creation)";
            return;
        }
        move_aside(".corrupt-" + time_suffix(), "the spool file header is damaged");
        return;
    }
    if (load_u32(header.data() + 8) != file_version) {
        move_aside(".unknown-version-" + time_suffix(),
                   "the spool file has an unknown version " + std::to_string(load_u32(header.data() + 8)));
        return;
    }
    std::string file_db(header.data() + 16, db_id_bytes);
    file_db.resize(std::strlen(file_db.c_str()));
    if (!options_.database_id.empty() && !file_db.empty() && file_db != options_.database_id) {
        move_aside(".foreign-" + file_db + "-" + time_suffix(),
                   "the spool file was written for database " + file_db + ", not for this one (" +
                       options_.database_id + ")");
        return;
    }

    // Checkpoint: the valid slot with the highest sequence number.
    std::uint64_t drained = header_bytes, inflight = size;  // no valid slot: everything in doubt
    bool have_slot = false;
    for (std::size_t s = 0; s < 2; ++s) {
        const char* p = header.data() + slot_offset + s * slot_bytes;
        if (load_u32(p + 60) != crc32c(p, 60)) continue;
        std::uint64_t seq = load_u64(p);
        if (seq == 0 || (have_slot && seq <= checkpoint_seq_)) continue;
        have_slot = true;
        checkpoint_seq_ = seq;
        drained = load_u64(p + 8);
        inflight = load_u64(p + 16);
    }
    if (!have_slot) log::warn("spool: no valid checkpoint in {}; every record will be probed", path_.string());

    // Walk the records: find the end of the last complete request.
    std::uint64_t pos = header_bytes, boundary = header_bytes;
    std::uint64_t records_total = 0, records_at_boundary = 0, pending_at_boundary = 0, pending_now = 0;
    std::string why_stop;
    bool damaged_inside = false;
    std::string body;
    for (;;) {
        if (pos == size) break;
        char head[record_header_bytes];
        if (size - pos < record_header_bytes || !pread_all(fd, head, record_header_bytes, pos)) {
            why_stop = "record header is incomplete";
            break;
        }
        std::uint32_t length = load_u32(head), checksum = load_u32(head + 4);
        if (length > max_record_body || length > size - pos - record_header_bytes) {
            why_stop = "record runs past the end of the file";
            if (length > max_record_body && length <= size - pos - record_header_bytes) damaged_inside = true;
            break;
        }
        body.resize(length);
        if (!pread_all(fd, body.data(), length, pos + record_header_bytes)) {
            why_stop = "cannot read a record: " + errno_text(errno);
            damaged_inside = true;
            break;
        }
        record r;
        auto res = decode_body(body, checksum, r);
        std::uint64_t next = pos + record_header_bytes + length;
        if (res.status != read_status::ok) {
            why_stop = res.why;
            // A bad last record is a torn append; one followed by more bytes is damage.
            damaged_inside = next < size;
            break;
        }
        ++records_total;
        if (pos >= drained) ++pending_now;
        pos = next;
        if (!r.more_follow) {
            boundary = pos;
            records_at_boundary = records_total;
            pending_at_boundary = pending_now;
        }
    }
    if (boundary < size) {
        std::uint64_t cut = size - boundary;
        if (damaged_inside) {
            auto aside = path_;
            aside += ".corrupt-" + time_suffix();
            std::string rest(static_cast<std::size_t>(cut), '\0');
            bool saved = pread_all(fd, rest.data(), rest.size(), boundary);
            if (saved) {
                int out = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                saved = out >= 0 && pwrite_all(out, rest.data(), rest.size(), 0) && ::fsync(out) == 0;
                if (out >= 0) ::close(out);
            }
            log::error("spool: {} is damaged at byte {} ({}); the {} bytes from there {} and are not drained",
                       path_.string(), pos, why_stop, cut,
                       saved ? "were copied to " + aside.string() : std::string("could NOT be saved"));
        } else {
            log::warn("spool: dropped a torn tail of {} bytes at byte {} of {} ({}); it was never answered", cut,
                      boundary, path_.string(), why_stop);
        }
        if (::ftruncate(fd, static_cast<off_t>(boundary)) != 0 || ::fdatasync(fd) != 0) {
            ::close(fd);
            throw std::runtime_error("spool: cannot cut the damaged tail of " + path_.string() + ": " +
                                     errno_text(errno));
        }
    }
    drained = std::clamp(drained, header_bytes, boundary);
    inflight = std::clamp(inflight, drained, boundary);
    fd_ = fd;
    durable_end_ = boundary;
    drained_end_ = drained;
    inflight_end_ = inflight;
    pending_ = pending_at_boundary;
    (void)records_at_boundary;
    if (pending_at_boundary == 0) {
        remove_file();
        recovery_summary_ = "empty (a fully drained file was removed)";
        return;
    }
    recovery_summary_ = std::to_string(pending_at_boundary) + " record(s) to drain" +
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
    if (fd_ >= 0) return true;
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) {
        why = "cannot create the spool directory " + options_.dir.string() + ": " + ec.message();
        return false;
    }
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        why = "cannot create " + path_.string() + ": " + errno_text(errno);
        return false;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        why = "cannot lock " + path_.string() + ": " + errno_text(errno);
        ::close(fd);
        return false;
    }
    std::string head = header_bytes_for(options_.database_id);
    std::string slot = slot_bytes_for(1, header_bytes, header_bytes);
    std::memcpy(head.data() + slot_offset, slot.data(), slot.size());
    if (!pwrite_all(fd, head.data(), head.size(), 0) || ::fdatasync(fd) != 0) {
        why = "cannot write " + path_.string() + ": " + errno_text(errno);
        ::close(fd);
        std::filesystem::remove(path_, ec);
        return false;
    }
    fsync_dir(options_.dir);
    fd_ = fd;
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
        if (buffer.empty()) buffer = std::move(r.bytes);
        else buffer += r.bytes;
        included.push_back(&r);
    }
    if (included.empty()) return;
    if (!pwrite_all(fd_, buffer.data(), buffer.size(), start) || ::fdatasync(fd_) != 0) {
        int err = errno;
        why = "cannot write to " + path_.string() + ": " + errno_text(err);
        // Take the partial write back, so that later records do not follow garbage.
        if (::ftruncate(fd_, static_cast<off_t>(start)) != 0) why += " (and cannot cut the partial write back)";
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
    if (fd_ < 0) return;
    std::uint64_t seq = checkpoint_seq_ + 1;
    std::string slot = slot_bytes_for(seq, drained, inflight);
    if (!pwrite_all(fd_, slot.data(), slot.size(), slot_offset + (seq % 2) * slot_bytes) || ::fdatasync(fd_) != 0)
        throw spool_error("cannot write the spool checkpoint: " + errno_text(errno), false);
    checkpoint_seq_ = seq;
}

spool_batch spool_file::do_read_batch(std::size_t max_records, std::size_t max_bytes) {
    spool_batch batch;
    batch.begin = batch.end = drained_end_;
    if (fd_ < 0 || read_stuck_) return batch;
    const std::uint64_t end = durable_end_.load();
    std::uint64_t pos = drained_end_;
    std::size_t bytes = 0, whole = 0;
    std::string body;
    while (pos < end) {
        char head[record_header_bytes];
        if (!pread_all(fd_, head, record_header_bytes, pos)) {
            set_problem("cannot read the spool at byte " + std::to_string(pos) + ": " + errno_text(errno));
            break;
        }
        std::uint32_t length = load_u32(head), checksum = load_u32(head + 4);
        record r;
        read_result res;
        if (length > max_record_body || pos + record_header_bytes + length > end) {
            res.status = read_status::corrupt;
            res.why = "record length out of range";
        } else {
            body.resize(length);
            if (!pread_all(fd_, body.data(), length, pos + record_header_bytes)) {
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
    if (fd_ < 0) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    if (ec) log::warn("spool: cannot remove the drained file {}: {}", path_.string(), ec.message());
    fsync_dir(options_.dir);
    ::close(fd_);  // releases the lock
    fd_ = -1;
    drained_end_ = inflight_end_ = 0;
    durable_end_ = 0;
    checkpoint_seq_ = 0;
}

// ---- awaitable wrappers ---------------------------------------------------------------

boost::asio::awaitable<void> spool_file::append(std::vector<record> records) {
    auto shared = std::make_shared<std::vector<record>>(std::move(records));
    std::function<void(core::completer<bool>)> start = [this, shared](core::completer<bool> done) {
        append(std::move(*shared), [done](std::exception_ptr e) { done(e, true); });
    };
    co_await core::await_completion<bool>(std::move(start));
}

boost::asio::awaitable<spool_batch> spool_file::read_batch(std::size_t max_records, std::size_t max_bytes) {
    std::function<void(core::completer<spool_batch>)> start = [this, max_records,
                                                                max_bytes](core::completer<spool_batch> done) {
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
    auto batch = co_await core::await_completion<spool_batch>(std::move(start));
    co_return batch;
}

boost::asio::awaitable<void> spool_file::mark_inflight(std::uint64_t end) {
    std::function<void(core::completer<bool>)> start = [this, end](core::completer<bool> done) {
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
    co_await core::await_completion<bool>(std::move(start));
}

boost::asio::awaitable<void> spool_file::mark_drained(std::uint64_t end, std::size_t count) {
    std::function<void(core::completer<bool>)> start = [this, end, count](core::completer<bool> done) {
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
    co_await core::await_completion<bool>(std::move(start));
}

}  // namespace queen::spool
