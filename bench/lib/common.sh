# Helpers shared by the benchmark scripts (sourced, not run).

# A free TCP port on 127.0.0.1.
free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
        return
    fi
    local p
    for _ in $(seq 1 100); do
        p=$((20000 + RANDOM % 40000))
        if ! ss -ltnH "sport = :$p" 2>/dev/null | grep -q .; then echo "$p"; return; fi
    done
    echo "no free port found" >&2
    return 1
}

CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# utime + stime + cutime + cstime (clock ticks) of one pid, 0 when it is gone.
proc_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    local -a a
    read -r -a a <<<"${stat##*) }"
    echo $((a[11] + a[12] + a[13] + a[14]))
}

# Ticks of a PostgreSQL server: the postmaster (its cutime/cstime include the backends it
# reaped) plus its live children.
postgres_ticks() {  # postmaster pid
    local pg=0 p
    for p in $1 $(pgrep -P "$1" 2>/dev/null || true); do pg=$((pg + $(proc_ticks "$p"))); done
    echo "$pg"
}

# Busy and total ticks of the whole machine.
machine_ticks() {
    local user nice system idle iowait irq softirq steal
    read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
    echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# Resident memory of a pid in KiB (0 when gone).
rss_kib() {
    awk '/^VmRSS:/ {print $2; found=1} END {if (!found) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}

# stop_process PID: SIGTERM to PID (if set and alive) and wait for it; never fails.
stop_process() {
    [[ -n ${1:-} ]] || return 0
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
