# Which statements a holder makes dearer (bench/snapshot.sh): from the "end" samples of the
# holder side's and the control side's statements.tsv (phase, minute, calls, total ms, shared
# blocks hit, read, rows, top level, statement), the statements with the most execution time
# per 1,000 messages on either side, matched by text, with their blocks hit per call. The
# totals count top-level statements only: a nested one's time is inside its caller's.
#
#   awk -f snapshot_statements.awk -v holder=NAME -v msgs_h=N -v msgs_c=N H/statements.tsv C/statements.tsv
BEGIN { FS = "\t"; top = top ? top : 12 }
FNR == 1 { side = (side == "") ? "h" : "c" }
$2 != "end" { next }
{
    key = ($8 == "t" ? "" : "(nested) ") $9
    seen[key] = 1
    calls[side, key] = $3; ms[side, key] = $4; hit[side, key] = $5
    if ($8 == "t") total[side] += $4
}
function per_k(s, k, n) { return n > 0 ? ms[s, k] * 1000 / n : 0 }
function per_call(v, c) { return c > 0 ? v / c : 0 }
END {
    if (msgs_h <= 0 || msgs_c <= 0) { print "statements: no messages on a side"; exit }
    n = 0
    for (k in seen) {
        w = per_k("h", k, msgs_h); v = per_k("c", k, msgs_c)
        order[++n] = k; weight[k] = (w > v ? w : v)
    }
    for (i = 2; i <= n; i++) {  # insertion sort by weight, descending
        k = order[i]
        for (j = i - 1; j >= 1 && weight[order[j]] < weight[k]; j--) order[j + 1] = order[j]
        order[j + 1] = k
    }
    printf "\n== %s: statement time per 1,000 messages (pg_stat_statements; control %d, holder %d messages)\n", holder, msgs_c, msgs_h
    printf "top-level statements (of the 60 dearest): control %.0f ms, holder %.0f ms per 1,000 messages\n", total["c"] * 1000 / msgs_c, total["h"] * 1000 / msgs_h
    printf "%9s %9s %6s  %9s %9s  %s\n", "ctl ms/k", "hld ms/k", "ratio", "ctl hit/c", "hld hit/c", "statement"
    for (i = 1; i <= n && i <= top; i++) {
        k = order[i]; w = per_k("h", k, msgs_h); v = per_k("c", k, msgs_c)
        printf "%9.1f %9.1f %6s  %9.1f %9.1f  %s\n", v, w, (v > 0 ? sprintf("%.2f", w / v) : "-"),
            per_call(hit["c", k], calls["c", k]), per_call(hit["h", k], calls["h", k]), substr(k, 1, 110)
    }
}
