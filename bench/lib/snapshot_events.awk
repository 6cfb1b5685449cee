# The events beside each slot of bench/snapshot.sh, to attribute a slow minute: per holder and
# minute, for the holder's slot and then the control's, the slot's rate, what each primary's
# log shows starting or ending inside that slot (checkpoints, autovacuum and autoanalyze runs
# of 0.1 s or more, with their elapsed seconds), and what the active side's backends were doing (pg_stat_activity
# sampled once a second: the share of samples per backend and wait event, "CPU" for none), and
# per phase who waits on a row or transaction lock for whom (push < ack: a push waiting for an
# acknowledgement's transaction).
#
#   awk -f snapshot_events.awk -v holders="standby" slots.tsv waits.tsv h=1 pg-h/postgres.log h=0 pg-c/postgres.log
#
# slots.tsv: phase, slot, side (h|c; not read here), start epoch, end epoch, consumed/s. waits.tsv: phase,
# slot, epoch, backend (push, pop, ack, autovacuum worker, pg_dump, other), wait event (or CPU),
# the kinds of backends a lock wait waits for ("-": none), count.
# The logs: PostgreSQL's default line prefix ("YYYY-MM-DD HH:MM:SS.mmm UTC [pid] LOG:  ...").
BEGIN { FS = "\t" }

FILENAME ~ /slots\.tsv$/ {
    key = $1 SUBSEP $2
    start[key] = $4; stop[key] = $5; rate[key] = $6
    next
}

FILENAME ~ /waits\.tsv$/ {
    key = $1 SUBSEP $2
    if (!((key, $3) in seen)) { seen[key, $3] = 1; samples[key]++; phase_samples[$1]++ }
    w = $4 " " $5
    waits[key, w] += $7
    if (!((key, w) in listed)) { listed[key, w] = 1; names[key] = names[key] "\t" w }
    # over the phase: who waits on a lock for whom
    if ($6 != "-") {
        b = $4 "<" $6
        blocked[$1, b] += $7
        if (!(($1, b) in blisted)) { blisted[$1, b] = 1; bnames[$1] = bnames[$1] "\t" b }
    }
    active[$1] += $7
    next
}

# A primary's log: h is 1 for side h's, 0 for side c's.
{
    s = h ? "h" : "c"
    if ($0 ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]/) {
        t = mktime(substr($0, 1, 4) " " substr($0, 6, 2) " " substr($0, 9, 2) " " substr($0, 12, 2) " " substr($0, 15, 2) " " substr($0, 18, 2))
        if ($0 ~ /LOG:  checkpoint starting: time/) add(s, t, "ckpt")
        else if ($0 ~ /LOG:  automatic (vacuum|analyze) of table "[^".]*\.queen\./) {  # the broker's tables only
            what = $0 ~ /automatic vacuum/ ? "av" : "an"
            tbl = $0
            sub(/.*of table "[^.]*\.[^.]*\./, "", tbl)
            sub(/".*/, "", tbl)
            pending = what ":" tbl; pending_at = t
        }
    } else if (pending != "" && match($0, /elapsed: [0-9.]+ s/)) {
        el = substr($0, RSTART + 9, RLENGTH - 11) + 0
        if (el >= 0.1) add(s, pending_at, sprintf("%s %.2f", pending, el))  # shorter runs are not worth a column
        pending = ""
    }
}

function add(s, t, text) { nev[s]++; ev_t[s, nev[s]] = t; ev_x[s, nev[s]] = text }

# "ckpt, av:log_consumers 0.35 ..." for the events of side s from a to b (epochs).
function events(s, a, b,   i, out) {
    out = ""
    for (i = 1; i <= nev[s]; i++)
        if (ev_t[s, i] >= a && ev_t[s, i] < b) out = out (out == "" ? "" : ", ") ev_x[s, i]
    return out == "" ? "-" : out
}

# Fills order[1..n] with the tab-separated names of list, largest weight[key, name] first; n.
function by_weight(list, weight, key, order,   n, i, j, t) {
    n = split(substr(list, 2), order, "\t")
    for (i = 2; i <= n; i++)  # insertion sort: a handful of names
        for (j = i; j > 1 && weight[key, order[j]] > weight[key, order[j - 1]]; j--) {
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
        }
    return n
}

# The four commonest (backend, wait event) of a slot, as shares of its active backends' samples.
function top_waits(key,   n, order, i, total, out) {
    n = by_weight(names[key], waits, key, order)
    total = 0
    for (i = 1; i <= n; i++) total += waits[key, order[i]]
    if (total == 0) return "-"
    out = ""
    for (i = 1; i <= n && i <= 4; i++)
        out = out (out == "" ? "" : ", ") sprintf("%s %.0f%%", order[i], 100 * waits[key, order[i]] / total)
    return sprintf("%.1f active: ", total / samples[key]) out
}

function row(label, key, m) {
    if (!(key in start)) return
    printf "%-3s %-8s %7.0f  %-44s %-44s %s\n", m, label, rate[key], events("h", start[key], stop[key]),
        events("c", start[key], stop[key]), top_waits(key)
}

# A phase's lock waits: "push<push 0.82, ack<push 0.10, ..." (waiter<blockers, backends
# waiting per sample, the largest first, down to 0.01).
function lock_waits(phase,   n, order, i, per, out) {
    n = by_weight(bnames[phase], blocked, phase, order)
    out = ""
    for (i = 1; i <= n; i++) {
        per = blocked[phase, order[i]] / phase_samples[phase]
        if (per < 0.01) break
        out = out (out == "" ? "" : ", ") sprintf("%s %.2f", order[i], per)
    }
    return out == "" ? "none" : out
}

END {
    n = split(holders, hs, " ")
    for (i = 1; i <= n; i++) {
        printf "\n== events by slot: %s (events on side h's and side c's primary inside the slot; ckpt: a timed checkpoint started; av/an: autovacuum/autoanalyze of a table ended, elapsed s, runs of 0.1 s or more; waits: the active side's backends, mean active and the commonest (backend, wait event))\n", hs[i]
        printf "%-3s %-8s %7s  %-44s %-44s %s\n", "min", "slot", "msgs/s", "events on h", "events on c", "waits"
        for (m = 1; (hs[i] "-holder" SUBSEP m) in start || (hs[i] "-control" SUBSEP m) in start; m++) {
            row("holder", hs[i] "-holder" SUBSEP m, m)
            row("control", hs[i] "-control" SUBSEP m, m)
        }
        for (j = 1; j <= 2; j++) {
            ph = hs[i] (j == 1 ? "-holder" : "-control")
            if (phase_samples[ph] == 0) continue
            printf "%s: %.2f active backends per sample; waiting on a lock per sample (waiter<blockers): %s\n", ph,
                active[ph] / phase_samples[ph], lock_waits(ph)
        }
    }
}
