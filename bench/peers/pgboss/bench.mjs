#!/usr/bin/env node
// Benchmark driver for pg-boss 10.4.2 (peer comparison for queen's bench).
//
// Workload (see README.md): N jobs of --payload-bytes of JSON, inserted by
// --senders concurrent loops with boss.insert() in batches of --batch, fetched
// by --workers concurrent loops with boss.fetch(queue, { batchSize }) and
// acknowledged with boss.complete(queue, ids). Every seq must be completed
// exactly once. Figures use the same definitions as queen_bench.

import { createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

const require = createRequire(import.meta.url)

let PgBoss, pgBossVersion
try {
  PgBoss = require('pg-boss')
  pgBossVersion = require('pg-boss/package.json').version
} catch (err) {
  console.error(`pg-boss is not installed next to this script (${err.message}); run bench/peers/pgboss/install.sh first`)
  process.exit(2)
}

const EXPECTED_VERSION = '10.4.2'

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/peers/pgboss/bench.mjs --url postgres://... [options]

  --url URL | --conninfo STR   PostgreSQL connection (URL, or libpq "key=value ..." string)
  --mode produce|consume|both  default both
  --queue NAME                 pg-boss queue name (default "bench")
  --messages N                 default 200000
  --senders S                  concurrent insert loops (default 4)
  --workers W                  concurrent fetch+complete loops (default 4)
  --batch B                    insert batch and fetch batchSize (default 100)
  --insert-batch B             override the insert batch only
  --fetch-batch B              override the fetch batchSize only
  --payload-bytes P            JSON text size of each job's data (default 200)
  --idle-sleep-ms MS           sleep after an empty fetch (default 10)
  --pool-max N                 pg pool size (default max(10, senders + workers + 2))
  --max-seconds T              give up after T seconds (default 600)
  --json-out FILE              append one JSON line with the result
  --label TEXT                 free text copied into the JSON result
  --quiet                      no progress lines on stderr
`

class UsageError extends Error {}

function parseArgs (argv) {
  const o = {
    url: null,
    conninfo: null,
    mode: 'both',
    queue: 'bench',
    messages: 200000,
    senders: 4,
    workers: 4,
    insertBatch: null,
    fetchBatch: null,
    batch: 100,
    payloadBytes: 200,
    idleSleepMs: 10,
    poolMax: null,
    maxSeconds: 600,
    jsonOut: null,
    label: '',
    quiet: false
  }
  const ints = {
    '--messages': 'messages',
    '--senders': 'senders',
    '--workers': 'workers',
    '--batch': 'batch',
    '--insert-batch': 'insertBatch',
    '--fetch-batch': 'fetchBatch',
    '--payload-bytes': 'payloadBytes',
    '--pool-max': 'poolMax'
  }
  const nums = { '--idle-sleep-ms': 'idleSleepMs', '--max-seconds': 'maxSeconds' }
  const strs = {
    '--url': 'url',
    '--conninfo': 'conninfo',
    '--mode': 'mode',
    '--queue': 'queue',
    '--json-out': 'jsonOut',
    '--label': 'label'
  }
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]
    let value = null
    const eq = arg.indexOf('=')
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1)
      arg = arg.slice(0, eq)
    }
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(USAGE)
      process.exit(0)
    }
    if (arg === '--quiet') { o.quiet = true; continue }
    const key = ints[arg] || nums[arg] || strs[arg]
    if (!key) throw new UsageError(`unknown option '${arg}'`)
    if (value === null) {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`)
      value = argv[++i]
    }
    if (ints[arg]) {
      if (!/^\d+$/.test(value)) throw new UsageError(`${arg} needs a non-negative integer, got '${value}'`)
      o[key] = Number(value)
    } else if (nums[arg]) {
      const v = Number(value)
      if (!Number.isFinite(v) || v < 0) throw new UsageError(`${arg} needs a non-negative number, got '${value}'`)
      o[key] = v
    } else {
      o[key] = value
    }
  }
  if (!['produce', 'consume', 'both'].includes(o.mode)) {
    throw new UsageError(`--mode must be produce, consume or both, got '${o.mode}'`)
  }
  if (o.url && o.conninfo) throw new UsageError('give --url or --conninfo, not both')
  o.insertBatch = o.insertBatch ?? o.batch
  o.fetchBatch = o.fetchBatch ?? o.batch
  o.poolMax = o.poolMax ?? Math.max(10, o.senders + o.workers + 2)
  if (o.messages < 1) throw new UsageError('--messages must be at least 1')
  if (o.mode !== 'consume' && o.senders < 1) throw new UsageError('--senders must be at least 1')
  if (o.mode !== 'produce' && o.workers < 1) throw new UsageError('--workers must be at least 1')
  if (o.insertBatch < 1 || o.fetchBatch < 1) throw new UsageError('batch sizes must be at least 1')
  if (o.poolMax < 1) throw new UsageError('--pool-max must be at least 1')
  if (o.maxSeconds <= 0) throw new UsageError('--max-seconds must be positive')
  if (!/^[\w-]+$/.test(o.queue)) throw new UsageError('--queue may contain only letters, digits, _ and -')
  return o
}

// libpq "key=value key='quoted value'" -> node-postgres config object.
function parseConninfo (s) {
  if (/^postgres(ql)?:\/\//.test(s)) return { connectionString: s }
  const out = {}
  const re = /\s*([A-Za-z_]+)\s*=\s*('((?:[^'\\]|\\.)*)'|[^\s']*)/y
  let m
  let pos = 0
  while (pos < s.length) {
    if (/^\s*$/.test(s.slice(pos))) break
    re.lastIndex = pos
    m = re.exec(s)
    if (!m) throw new UsageError(`cannot parse --conninfo near '${s.slice(pos)}'`)
    pos = re.lastIndex
    const key = m[1]
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2]
    switch (key) {
      case 'host': case 'hostaddr': out.host = value; break
      case 'port': out.port = Number(value); break
      case 'dbname': out.database = value; break
      case 'user': out.user = value; break
      case 'password': out.password = value; break
      case 'application_name': out.application_name = value; break
      case 'connect_timeout': out.connectionTimeoutMillis = Number(value) * 1000; break
      case 'sslmode':
        if (value === 'disable' || value === 'allow' || value === 'prefer') break
        out.ssl = (value === 'require') ? { rejectUnauthorized: false } : true
        break
      default: // options, keepalives, ...: not needed for the bench
        break
    }
  }
  return out
}

// ---------------------------------------------------------------- helpers

const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000)

// {"producer":3,"seq":12345,"sentUs":<µs>,"pad":"xxx…"} whose JSON text is
// exactly `bytes` long (all characters are ASCII, so length == bytes).
function makePayload (producer, seq, bytes) {
  const sentUs = nowUs()
  const base = JSON.stringify({ producer, seq, sentUs, pad: '' }).length
  const pad = bytes > base ? 'x'.repeat(bytes - base) : ''
  return { producer, seq, sentUs, pad }
}

function fmtRate (x) { return x === null ? '-' : x.toFixed(1) }
function fmtSec (x) { return x === null ? '-' : x.toFixed(3) }

// ---------------------------------------------------------------- main

async function main () {
  let o
  try {
    o = parseArgs(process.argv.slice(2))
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench.mjs: ${err.message}\n\n${USAGE}`)
      process.exit(2)
    }
    throw err
  }
  if (pgBossVersion !== EXPECTED_VERSION) {
    console.error(`warning: pg-boss ${pgBossVersion} installed, this driver is written for ${EXPECTED_VERSION}`)
  }

  // Smallest payload we can produce (largest seq / producer numbers, 16-digit µs).
  const minBytes = JSON.stringify({ producer: Math.max(0, o.senders - 1), seq: o.messages - 1, sentUs: nowUs(), pad: '' }).length
  if (o.mode !== 'consume' && o.payloadBytes < minBytes) {
    process.stderr.write(`bench.mjs: --payload-bytes ${o.payloadBytes} is smaller than the unpadded payload (${minBytes} bytes)\n`)
    process.exit(2)
  }

  const producing = o.mode !== 'consume'
  const consuming = o.mode !== 'produce'
  const N = o.messages
  const log = (msg) => { if (!o.quiet) process.stderr.write(`[pgboss-bench] ${msg}\n`) }

  // ------------------------------------------------ pg-boss instance
  const connection = o.url ? { connectionString: o.url }
    : o.conninfo ? parseConninfo(o.conninfo)
      : {} // libpq environment (PGHOST, PGPORT, ...) as node-postgres reads it
  const boss = new PgBoss({
    ...connection,
    application_name: 'pgboss-bench',
    max: o.poolMax, // node-postgres pool size (pg-boss passes its config to pg.Pool)
    migrate: true, // create / migrate schema "pgboss" in start()
    supervise: false, // no maintenance timer (expire / archive / drop)
    schedule: false, // no timekeeper (cron monitor, __pgboss__send-it worker, clock-skew checks)
    // monitorStateIntervalSeconds left unset: no state-count monitor
    // archiveCompletedAfterSeconds etc. left at defaults: they only matter when supervise runs
  })
  const errors = []
  boss.on('error', (err) => { errors.push(String(err?.message || err)); log(`pg-boss error: ${err?.message || err}`) })

  const failures = []
  const result = {
    system: 'pg-boss',
    version: pgBossVersion,
    label: o.label,
    mode: o.mode,
    messages: N,
    queue: o.queue,
    conditions: {
      senders: producing ? o.senders : 0,
      insertBatch: o.insertBatch,
      workers: consuming ? o.workers : 0,
      fetchBatch: o.fetchBatch,
      payloadBytes: o.payloadBytes,
      idleSleepMs: o.idleSleepMs,
      poolMax: o.poolMax,
      maxSeconds: o.maxSeconds
    },
    throughput: { produce: null, consume: null, endToEnd: null },
    seconds: { produce: null, consume: null, endToEnd: null },
    verification: { duplicates: null, missing: null },
    counts: {},
    failures,
    result: 'failed'
  }

  let exitCode = 1
  try {
    await boss.start()

    // Wrappers for the `db` option of insert/fetch/complete: the same pg-boss
    // pool and SQL, but we see the INSERT row count and the fetch errors that
    // pg-boss's fetch() swallows (it returns [] on any error).
    const bossDb = boss.getDb()
    let fetchErrors = 0
    let lastFetchError = null
    const countingDb = {
      inserted: 0,
      async executeSql (text, values) {
        const r = await bossDb.executeSql(text, values)
        this.inserted += r?.rowCount ?? 0
        return r
      }
    }
    const fetchDb = {
      async executeSql (text, values) {
        try {
          return await bossDb.executeSql(text, values)
        } catch (err) {
          fetchErrors++
          lastFetchError = err.message
          throw err
        }
      }
    }

    // ------------------------------------------------ queue preparation
    if (producing) {
      await boss.createQueue(o.queue) // v10: required before insert; idempotent (ON CONFLICT DO NOTHING)
    }
    const queueRow = await boss.getQueue(o.queue)
    if (!queueRow) throw new Error(`queue '${o.queue}' does not exist (run --mode produce first)`)
    const queuedBefore = await boss.getQueueSize(o.queue) // state created|retry
    if (o.mode === 'both' && queuedBefore > 0) {
      throw new Error(`queue '${o.queue}' is not fresh: it holds ${queuedBefore} queued jobs; use a new --queue for --mode both`)
    }
    if (o.mode === 'consume' && queuedBefore < N) {
      throw new Error(`queue '${o.queue}' holds ${queuedBefore} queued jobs, fewer than --messages ${N}`)
    }
    log(`${o.mode}: ${N} messages on queue '${o.queue}' (queued before: ${queuedBefore})`)

    // ------------------------------------------------ shared run state
    const runStart = performance.now()
    const deadline = runStart + o.maxSeconds * 1000
    let stopReason = null // 'time limit' | 'fatal'
    const stop = (why) => { if (!stopReason) stopReason = why }
    const timeUp = () => {
      if (performance.now() > deadline) stop('time limit')
      return stopReason !== null
    }

    // producers
    let firstInsertSent = null
    let lastInsertDone = null
    let insertCalls = 0
    let insertedRequested = 0
    let insertErrors = 0

    // consumers
    const seen = consuming ? new Uint8Array(N) : null
    let claimed = 0 // jobs reserved by in-flight or finished fetches (bounded by N)
    let delivered = 0 // jobs whose complete() resolved
    let completedExpected = 0 // distinct expected seqs completed
    let duplicates = 0
    let unexpected = 0
    let ackShortfall = 0 // complete() affected fewer rows than ids given
    let completeErrors = 0
    let fetchCalls = 0
    let emptyFetches = 0
    let firstFetchSent = null
    let lastExpectedCompleted = null

    async function sender (index, firstSeq, count) {
      let seq = firstSeq
      const end = firstSeq + count
      while (seq < end && !timeUp()) {
        const n = Math.min(o.insertBatch, end - seq)
        const jobs = new Array(n)
        for (let k = 0; k < n; k++) {
          jobs[k] = { name: o.queue, data: makePayload(index, seq + k, o.payloadBytes) }
        }
        if (firstInsertSent === null) firstInsertSent = performance.now()
        insertCalls++
        insertedRequested += n
        try {
          await boss.insert(jobs, { db: countingDb }) // v10: insert(jobs[]) with `name` in each job
        } catch (err) {
          insertErrors++
          failures.push(`insert failed: ${err.message}`)
          stop('fatal')
          return
        }
        lastInsertDone = performance.now()
        seq += n
      }
    }

    async function worker (index) {
      let consecutiveFetchErrors = 0
      while (!timeUp()) {
        const want = Math.min(o.fetchBatch, N - claimed)
        if (want <= 0) return // everything is claimed by some worker
        claimed += want
        if (firstFetchSent === null) firstFetchSent = performance.now()
        fetchCalls++
        const errorsBefore = fetchErrors
        const jobs = await boss.fetch(o.queue, { batchSize: want, db: fetchDb })
        claimed -= want - jobs.length
        if (jobs.length === 0) {
          if (fetchErrors > errorsBefore) {
            if (++consecutiveFetchErrors >= 50) {
              failures.push(`fetch failed 50 times in a row: ${lastFetchError}`)
              stop('fatal')
              return
            }
          } else {
            emptyFetches++
          }
          if (o.idleSleepMs > 0) await sleep(o.idleSleepMs)
          continue
        }
        consecutiveFetchErrors = 0
        const ids = new Array(jobs.length)
        for (let k = 0; k < jobs.length; k++) ids[k] = jobs[k].id
        let res
        try {
          res = await boss.complete(o.queue, ids)
        } catch (err) {
          completeErrors++
          failures.push(`complete failed: ${err.message}`)
          stop('fatal')
          return
        }
        const done = performance.now()
        if (res.affected < ids.length) ackShortfall += ids.length - res.affected
        delivered += jobs.length
        for (const job of jobs) {
          const seq = job.data?.seq
          if (!Number.isInteger(seq) || seq < 0 || seq >= N) { unexpected++; continue }
          if (seen[seq]++ > 0) { duplicates++; if (seen[seq] > 200) seen[seq] = 200; continue }
          completedExpected++
          if (completedExpected === N) lastExpectedCompleted = done
        }
      }
    }

    // progress on stderr
    const progress = o.quiet ? null : setInterval(() => {
      const t = ((performance.now() - runStart) / 1000).toFixed(1)
      const parts = [`t=${t}s`]
      if (producing) parts.push(`inserted=${countingDb.inserted}`)
      if (consuming) parts.push(`completed=${completedExpected}`, `emptyFetches=${emptyFetches}`)
      log(parts.join(' '))
    }, 5000)

    const loops = []
    if (producing) {
      const share = Math.floor(N / o.senders)
      const extra = N % o.senders
      let next = 0
      for (let i = 0; i < o.senders; i++) {
        const count = share + (i < extra ? 1 : 0)
        loops.push(sender(i, next, count))
        next += count
      }
    }
    if (consuming) {
      for (let i = 0; i < o.workers; i++) loops.push(worker(i))
    }
    const settled = await Promise.allSettled(loops)
    if (progress) clearInterval(progress)
    for (const s of settled) {
      if (s.status === 'rejected') { failures.push(`loop crashed: ${s.reason?.stack || s.reason}`); stop('fatal') }
    }
    const runEnd = performance.now()

    // ------------------------------------------------ figures
    const secs = (a, b) => (a !== null && b !== null && b > a) ? (b - a) / 1000 : null
    const rate = (n, s) => (s ? n / s : null)
    if (producing) {
      const s = secs(firstInsertSent, lastInsertDone)
      result.seconds.produce = s
      result.throughput.produce = rate(countingDb.inserted, s)
    }
    if (consuming) {
      const end = lastExpectedCompleted ?? runEnd
      const s = secs(firstFetchSent, end)
      result.seconds.consume = s
      result.throughput.consume = rate(completedExpected, s)
      const e = secs(runStart, end)
      result.seconds.endToEnd = e
      result.throughput.endToEnd = rate(completedExpected, e)
    }
    result.seconds.elapsed = (runEnd - runStart) / 1000

    // ------------------------------------------------ verification
    if (consuming) {
      result.verification = { duplicates, missing: N - completedExpected }
      result.counts = {
        delivered,
        unexpected,
        ackShortfall,
        fetchCalls,
        emptyFetches,
        fetchErrors,
        completeErrors
      }
      if (unexpected) failures.push(`${unexpected} jobs with a seq outside 0..${N - 1}`)
      if (ackShortfall) failures.push(`${ackShortfall} jobs not marked completed by complete()`)
      if (fetchErrors) failures.push(`${fetchErrors} fetch errors (last: ${lastFetchError})`)
    } else {
      // produce only: nothing is consumed; check that every job became a row.
      result.verification = { duplicates: 0, missing: N - countingDb.inserted }
    }
    if (producing) {
      result.counts.insertCalls = insertCalls
      result.counts.inserted = countingDb.inserted
      result.counts.insertErrors = insertErrors
      if (countingDb.inserted !== insertedRequested) {
        failures.push(`${insertedRequested - countingDb.inserted} jobs given to insert() were not inserted`)
      }
    }
    if (result.verification.duplicates) failures.push(`${result.verification.duplicates} duplicate deliveries`)
    if (result.verification.missing) failures.push(`${result.verification.missing} messages missing`)
    if (stopReason === 'time limit') failures.unshift(`time limit of ${o.maxSeconds} s reached`)
    if (errors.length) failures.push(...errors.map((e) => `pg-boss error event: ${e}`))
    result.queuedAfter = await boss.getQueueSize(o.queue).catch(() => null)
    exitCode = failures.length ? 1 : 0
    result.result = exitCode === 0 ? 'ok' : 'failed'
  } catch (err) {
    failures.push(err.message)
    result.result = 'failed'
    exitCode = 1
  } finally {
    await Promise.race([boss.stop({ graceful: false }).catch(() => {}), sleep(5000)])
  }

  // ------------------------------------------------ output
  const table = [
    `pg-boss ${result.version}  mode=${o.mode}  messages=${N}  queue=${o.queue}${o.label ? `  label=${o.label}` : ''}`,
    `senders=${result.conditions.senders} insertBatch=${o.insertBatch} workers=${result.conditions.workers} fetchBatch=${o.fetchBatch} payloadBytes=${o.payloadBytes}`,
    '  figure           msgs/s     seconds',
    `  produce     ${fmtRate(result.throughput.produce).padStart(12)} ${fmtSec(result.seconds.produce).padStart(11)}`,
    `  consume     ${fmtRate(result.throughput.consume).padStart(12)} ${fmtSec(result.seconds.consume).padStart(11)}`,
    `  end-to-end  ${fmtRate(result.throughput.endToEnd).padStart(12)} ${fmtSec(result.seconds.endToEnd).padStart(11)}`,
    `verification: duplicates=${result.verification.duplicates ?? '-'} missing=${result.verification.missing ?? '-'}  result=${result.result}`
  ]
  for (const f of failures) table.push(`  failure: ${f}`)
  process.stdout.write(table.join('\n') + '\n')

  if (o.jsonOut) appendFileSync(o.jsonOut, JSON.stringify(result) + '\n')
  process.exit(exitCode)
}

main().catch((err) => {
  console.error(err?.stack || err)
  process.exit(1)
})
