// The load generator of benchmark 1 (its own process, pinned to the other core): autocannon against one URL.
// argv: <url> <connections> <seconds> [apiKey]; prints one JSON line.
import autocannon from 'autocannon';

const [url, connections, seconds, apiKey] = process.argv.slice(2);
const result = await autocannon({
  url, connections: Number(connections), duration: Number(seconds), pipelining: 1,
  headers: apiKey ? { 'x-api-key': apiKey } : {},
});
process.stdout.write(`${JSON.stringify({
  rps: result.requests.average, rps_total: result.requests.total / Number(seconds), latency_p50: result.latency.p50, latency_p99: result.latency.p99,
  non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, bytes_per_req: result.throughput.total / Math.max(1, result.requests.total),
})}\n`);
