// Overview: cluster counts and totals (/api/v1/resources/overview), throughput per minute over
// the last hour (/api/v1/status), and the queue depth sampled on this page; refreshed every 3 s.
import { get } from '../api.js';
import { lineChart, seriesOf } from '../chart.js';
import { h, replace, stat } from '../dom.js';
import { duration, num, rate } from '../format.js';

const REFRESH_MS = 3000;
const SAMPLES = 100;

export default async function overview(root, ctx) {
  const cards = h('div', { class: 'stats' });
  const charts = h('div', { class: 'charts' });
  const age = h('p', { class: 'muted' });
  replace(root, h('h1', {}, 'Overview'), cards, age, charts);
  const depth = [];

  // One refresh: both routes, then every figure and chart.
  async function refresh() {
    const [o, s] = await Promise.all([get('/api/v1/resources/overview'), get('/api/v1/status')]);
    if (!ctx.current()) return;
    const now = Date.now();
    depth.push({ t: now, pending: o.messages.pending, processing: o.messages.processing });
    if (depth.length > SAMPLES) depth.shift();
    replace(
      cards,
      stat('Queues', num(o.queues), 'queues'),
      stat('Partitions', num(o.partitions), 'partitions'),
      stat('Messages pushed', num(o.messages.total), 'total'),
      stat('Pending', num(o.messages.pending), 'pending'),
      stat('Processing', num(o.messages.processing), 'processing'),
      stat('Completed', num(o.messages.completed), 'completed'),
      stat('Dead letters', num(s.deadLetterQueue.totalMessages), 'dead-letters'),
      stat('Ingested / s (5 min)', rate(o.throughput.ingestedPerSecond), 'ingested-rate'),
      stat('Processed / s (5 min)', rate(o.throughput.processedPerSecond), 'processed-rate'),
      stat('Pop lag avg / max', `${duration(o.lag.time.avg)} / ${duration(o.lag.time.max)}`, 'lag'),
    );
    age.textContent = `Counts from the stats snapshot, ${o.statsAge < 0 ? 'not taken yet' : `${o.statsAge}s old`}; totals flushed by each broker. Buckets of ${s.bucketMinutes} min.`;
    replace(
      charts,
      lineChart({
        title: 'Messages per minute (last hour)',
        series: seriesOf(s.throughput, 'timestamp', [['ingested', 'pushed'], ['processed', 'acked'], ['popMessages', 'popped']]),
        test: 'throughput',
        window: s.timeRange,
      }),
      lineChart({
        title: 'Messages per second (last hour)',
        series: seriesOf(s.throughput, 'timestamp', [['ingestedPerSecond', 'push/s'], ['processedPerSecond', 'ack/s'], ['popPerSecond', 'pop/s']]),
        test: 'rates',
        window: s.timeRange,
      }),
      lineChart({
        title: 'Depth, sampled on this page',
        series: [
          { name: 'pending', points: depth.map((d) => ({ t: d.t, v: d.pending })) },
          { name: 'processing', points: depth.map((d) => ({ t: d.t, v: d.processing })) },
        ],
        test: 'depth',
      }),
    );
  }

  await refresh();
  ctx.every(REFRESH_MS, refresh);
}
