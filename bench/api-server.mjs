// A server process of benchmark 1, pinned to one core by bench/api.mjs. argv: <mode> <port> <dataDir> <campaignId>
//   ours:  the real service (http/main.js startService: createHttpServer + every module) on the prepared data dir
//   bare:  node:http doing the same work for GET /api/v1/campaign/{id}: the API-key lookup (SHA-256 digest, one
//          SELECT) and the same SQLite reads (campaign, workflow name, its telephony configuration, latest logs),
//          answered as JSON
//   hello: node:http answering {"hello":"world"}
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { startService } from './lib.mjs';

const [mode, portArg, dataDir] = process.argv.slice(2);
const port = Number(portArg);

const listen = (server) => new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', () => resolve());
});

async function main() {
  if (mode === 'ours') {
    await startService(dataDir, { PORT: String(port) });
  } else if (mode === 'hello') {
    const body = JSON.stringify({ hello: 'world' });
    await listen(http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }));
  } else if (mode === 'bare') {
    const db = new Database(join(dataDir, 'callplane.db'), { readonly: true });
    const key = db.prepare('SELECT id, organization_id, user_id, key_digest, revoked_at FROM api_keys WHERE key_digest = ?');
    const campaign = db.prepare('SELECT * FROM campaigns WHERE organization_id = ? AND id = ?');
    const workflow = db.prepare('SELECT name FROM workflows WHERE organization_id = ? AND id = ?');
    const config = db.prepare('SELECT name FROM telephony_configurations WHERE organization_id = ? AND id = ?');
    const logs = db.prepare('SELECT * FROM campaign_logs WHERE organization_id = ? AND campaign_id = ? ORDER BY id DESC LIMIT 100');
    const iso = (t) => (t == null ? null : new Date(t).toISOString());
    const json = (v) => (typeof v === 'string' && (v.startsWith('{') || v.startsWith('[')) ? JSON.parse(v) : v);
    const send = (res, status, obj) => {
      const body = JSON.stringify(obj);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    await listen(http.createServer((req, res) => {
      const m = /^\/api\/v1\/campaign\/(\d+)$/.exec(req.url ?? '');
      if (!m) return send(res, 404, { detail: 'Not Found', code: 'not_found' });
      const apiKey = req.headers['x-api-key'];
      const found = typeof apiKey === 'string' ? key.get(createHash('sha256').update(apiKey.trim(), 'utf8').digest('hex')) : undefined;
      if (!found || found.revoked_at) return send(res, 401, { detail: 'Invalid or revoked API key', code: 'invalid_credentials' });
      const c = campaign.get(found.organization_id, Number(m[1]));
      if (!c) return send(res, 404, { detail: 'Campaign not found', code: 'campaign_not_found' });
      const wf = workflow.get(found.organization_id, c.workflow_id);
      const cfg = c.telephony_configuration_id === null ? null : config.get(found.organization_id, c.telephony_configuration_id);
      const out = {};
      for (const [k, v] of Object.entries(c)) out[k] = k.endsWith('_at') ? iso(v) : json(v);
      out.workflow_name = wf?.name ?? null;
      out.telephony_configuration_name = cfg?.name ?? null;
      out.logs = logs.all(found.organization_id, c.id).reverse().map((l) => ({ ts: iso(l.ts), level: l.level, event: l.event, message: l.message, details: json(l.details) }));
      send(res, 200, out);
    }));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write('READY\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
