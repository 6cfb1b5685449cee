# The report of bench/snapshot.sh: per holder, a table by minute of the control's and the
# holder's throughput and of the hot tables' dead tuples and sizes, then the medians, the
# slowest holder minute and issue 12's targets, and the slowest holder minute against the
# control minute that ran beside it (bench/snapshot.sh interleaves the two).
#
#   awk -f snapshot_report.awk -v holders="rr dump standby" -v interval=60 intervals.tsv tables.tsv
#
# intervals.tsv: phase (<holder>-holder|<holder>-control), minute, consumed/s, pushed/s, full
# (1 when the interval is a whole one), load average. tables.tsv: phase, minute (or "end"),
# epoch, table, live tuples, dead tuples, heap bytes, index bytes, total bytes, autovacuums.
BEGIN {
    FS = "\t"
    hot = "log_partitions log_consumers log_dedup log_segments"
    nhot = split(hot, hots, " ")
    if (interval == "") interval = 60
    unit = interval == 60 ? "min" : "#"
    unit_name = interval == 60 ? "minute" : interval " s interval"
    title["rr"] = "idle REPEATABLE READ session on the broker database (holder) vs none (control)"
    title["dump"] = "pg_dump loop of the holder side's broker database, through the slots of both sides"
    title["none"] = "no holder on either side: the method's own noise (an A/A run)"
    title["standby"] = "standby with one long REPEATABLE READ query, hot_standby_feedback on (holder) vs off (control)"
}

FNR == NR {  # intervals.tsv
    rate[$1, $2] = $3
    full[$1, $2] = $5
    split($6, la, " ")
    load[$1, $2] = la[1]
    if ($2 > minutes[$1]) minutes[$1] = $2
    next
}
$2 != "end" {  # tables.tsv
    dead[$1, $2, $4] = $6
    total[$1, $2, $4] = $9
}

# 1234, 12.3k, 1.2M
function count_text(n) {
    if (n == "") return "-"
    if (n < 10000) return sprintf("%d", n)
    if (n < 1000000) return sprintf("%.1fk", n / 1000)
    return sprintf("%.1fM", n / 1000000)
}

function mb_text(b) { return b == "" ? "-" : sprintf("%.1f", b / 1048576) }

# Median of the full intervals of a phase (into the global `med`), their count is returned.
function phase_median(phase,   vals, n, i, j, t) {
    n = 0
    for (i = 1; i <= minutes[phase]; i++)
        if (full[phase, i] == 1) vals[++n] = rate[phase, i] + 0
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && vals[j - 1] > vals[j]; j--) { t = vals[j]; vals[j] = vals[j - 1]; vals[j - 1] = t }
    med = n == 0 ? 0 : (n % 2 ? vals[(n + 1) / 2] : (vals[n / 2] + vals[n / 2 + 1]) / 2)
    low = n == 0 ? 0 : vals[1]
    return n
}

function header(   t, line) {
    line = sprintf("%-4s %9s %9s %6s %11s", unit, "control/s", "holder/s", "ratio", "load c/h")
    for (t = 1; t <= nhot; t++) line = line sprintf("  %-27s", hots[t])
    sub(/ +$/, "", line)
    print line
}

function row(h, m,   c, o, line, t, key) {
    c = h "-control"; o = h "-holder"
    line = sprintf("%-4s %9s %9s %6s %11s", m (full[o, m] == 1 || full[c, m] == 1 ? "" : "*"),
                   (c, m) in rate ? sprintf("%.0f", rate[c, m]) : "-", (o, m) in rate ? sprintf("%.0f", rate[o, m]) : "-",
                   rate[c, m] > 0 && (o, m) in rate ? sprintf("%.2f", rate[o, m] / rate[c, m]) : "-",
                   ((c, m) in load ? load[c, m] : "-") "/" ((o, m) in load ? load[o, m] : "-"))
    for (t = 1; t <= nhot; t++) {
        key = hots[t]
        line = line sprintf("  %-27s", count_text(dead[c, m, key]) "/" count_text(dead[o, m, key]) ", " \
                            mb_text(total[c, m, key]) "/" mb_text(total[o, m, key]))
    }
    sub(/ +$/, "", line)
    print line
}

# The lowest holder/control ratio of a minute in which both were full (into `pair_min`, its
# minute into `pair_at`); the number of such minutes is returned.
function paired_low(c, o,   m, n, r) {
    n = 0; pair_min = 0; pair_at = 0
    for (m = 1; m <= minutes[o]; m++)
        if (full[o, m] == 1 && full[c, m] == 1 && rate[c, m] > 0) {
            r = rate[o, m] / rate[c, m]
            if (n++ == 0 || r < pair_min) { pair_min = r; pair_at = m }
        }
    return n
}

function report(h,   c, o, m, last, nc, no, cmed, hmed, hlow, np) {
    c = h "-control"; o = h "-holder"
    print ""
    print "== " h ": " title[h]
    print "consumed msgs/s per " unit_name ", end to end (first deliveries acked); 1-minute load average; per hot"
    print "table at the end of the " unit_name ": dead tuples control/holder, total size (heap + indexes + TOAST) in MB"
    header()
    last = minutes[c] > minutes[o] ? minutes[c] : minutes[o]
    for (m = 1; m <= last; m++) row(h, m)
    nc = phase_median(c); cmed = med
    no = phase_median(o); hmed = med; hlow = low
    printf "median %s: control %.0f/s (of %d full), holder %.0f/s (of %d full), holder/control %.2f; slowest holder %s %.0f/s = %.2f x the control median\n",
           unit_name, cmed, nc, hmed, no, (cmed > 0 ? hmed / cmed : 0), unit_name, hlow, (cmed > 0 ? hlow / cmed : 0)
    if (nc == 0 || no == 0) { print "target: NOT CHECKED (no full " unit_name ")"; return }
    printf "target: median holder %s >= 0.9 x control median: %s (%.2f)\n", unit_name, (hmed >= 0.9 * cmed ? "PASS" : "FAIL"), hmed / cmed
    printf "target: no holder %s < 0.8 x control median: %s (slowest %.2f)\n", unit_name, (hlow >= 0.8 * cmed ? "PASS" : "FAIL"), hlow / cmed
    np = paired_low(c, o)
    if (np > 0)
        printf "beside it: no holder %s < 0.8 x the control %s that ran next to it: %s (lowest %.2f, %s %d)\n",
               unit_name, unit_name, (pair_min >= 0.8 ? "PASS" : "FAIL"), pair_min, unit, pair_at
}

END {
    n = split(holders, hs, " ")
    for (i = 1; i <= n; i++) report(hs[i])
    print ""
    print "(* a partial " unit_name "; ratio: holder / control in the same " unit_name ", which ran next to each other; targets: issue 12, against the control median)"
}
