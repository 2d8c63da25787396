// Benchmark 5: resident memory of 100 running campaigns waiting outside their schedule slots. 200 campaigns are
// created first; the heap and RSS are measured (after GC) before and after starting the first 100, and again after
// starting the second 100, and the active timers are counted: an idle running campaign should cost <= 2 KB and no
// timer of its own. The first batch also pays one-time costs (code and caches warmed by the first dispatches of
// many campaigns); the second batch shows what one more idle campaign costs, which is what the target is about.
// Both figures are reported.
// Run with --expose-gc (bench/run.mjs does).
import { createSimulatorConfig, createWorkflow, freshDir, must, report, startService, uploadCsv } from './lib.mjs';

const CAMPAIGNS = 100;
const TOTAL = 2 * CAMPAIGNS;

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((r) => setTimeout(r, 100));
  }
};
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const snapshot = () => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss, external: m.external + m.arrayBuffers, timers: timers() };
};

async function main() {
  if (!global.gc) throw new Error('run with --expose-gc');
  const dir = freshDir('memory');
  const api = await startService(dir);
  const auth = await api.signup();
  const workflowId = await createWorkflow(api, auth);
  await createSimulatorConfig(api, auth);
  const key = await uploadCsv(api, auth, 'phone_number,first_name\n+12025550100,Ada\n+12025550101,Bob\n');
  // one slot, one minute long, on a day that is not today (UTC): no call may start now
  const day = (new Date().getUTCDay() + 6 + 3) % 7;
  const ids = [];
  for (let i = 0; i < TOTAL; i++) {
    ids.push((await must(api.post('/campaign/create', {
      name: `Waiting ${i}`, workflow_id: workflowId, source_type: 'csv', source_id: key,
      schedule_config: { timezone: 'UTC', slots: [{ day_of_week: day, start_time: '03:00', end_time: '03:01' }] },
    }, auth), 'create')).id);
  }
  // exercise the request path once so lazily built code does not land in the measurement
  await must(api.post(`/campaign/${ids[0]}/start`, undefined, auth), 'start');
  await must(api.post(`/campaign/${ids[0]}/pause`, undefined, auth), 'pause');
  await new Promise((r) => setTimeout(r, 1000));
  await settle();
  const before = snapshot();
  for (const id of ids.slice(1, CAMPAIGNS)) await must(api.post(`/campaign/${id}/start`, undefined, auth), 'start');
  await must(api.post(`/campaign/${ids[0]}/resume`, undefined, auth), 'resume');
  // let the dispatch jobs run and find every campaign outside its slots
  await new Promise((r) => setTimeout(r, 3000));
  await settle();
  const after = snapshot();
  for (const id of ids.slice(CAMPAIGNS)) await must(api.post(`/campaign/${id}/start`, undefined, auth), 'start');
  await new Promise((r) => setTimeout(r, 3000));
  await settle();
  const after2 = snapshot();
  const states = await Promise.all(ids.map(async (id) => (await must(api.get(`/campaign/${id}`, auth), 'get')).state));
  const runs = (await must(api.get(`/campaign/${ids[5]}/runs`, auth), 'runs')).total_count ?? 0;
  await api.stop();
  report({
    name: 'memory', campaigns: CAMPAIGNS, running: states.filter((s) => s === 'running').length, runs_started: runs,
    heap_bytes_per_campaign: (after2.heap - after.heap) / CAMPAIGNS, rss_bytes_per_campaign: (after2.rss - after.rss) / CAMPAIGNS,
    first_batch_heap_bytes_per_campaign: (after.heap - before.heap) / CAMPAIGNS, first_batch_rss_bytes_per_campaign: (after.rss - before.rss) / CAMPAIGNS,
    timers_before: before.timers, timers_after: after2.timers, target_bytes: 2048,
  });
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
