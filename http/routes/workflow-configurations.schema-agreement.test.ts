import { describe, expect, it } from '@jest/globals';
import { validateWorkflowConfigurations, workflowConfigurationsSchema } from '../../core/workflows/workflow-configurations.js';
import type { JsonSchema } from '../routing/route.js';
import { compileValidator } from '../validation/ajv.js';

/**
 * The route validates `workflow_configurations` with `workflowConfigurationsSchema` (ajv, also the OpenAPI
 * document) and the use case again with `validateWorkflowConfigurations` (embedders). This mutates every
 * member of a configuration using every known key and checks that both accept the same values and report
 * their issues at the same `loc`s.
 */
const ajvCheck = compileValidator({ type: 'object', properties: { workflow_configurations: workflowConfigurationsSchema as unknown as JsonSchema } }, 'body');

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const full: Json = {
  llm: { service_id: 3, model: 'gpt-4o-mini', temperature: 0.7 },
  stt: { service_id: 4, model: 'nova-3', language: 'en' },
  tts: { service_id: 5, voice: 'alloy', model: 'tts-1' },
  max_call_duration_seconds: 600, user_idle_timeout_seconds: 10, interruption_min_speech_ms: 300,
  voicemail: { detect: true, action: 'leave_message', message: 'Call us back' },
};
const DELETE = Symbol('delete');
const REPLACEMENTS: (Json | typeof DELETE)[] = [DELETE, null, 42, -1, 0, 1.5, 3, 5001, 15000, 'text', '', '   ', 'hangup', true, [], {}, 'x'.repeat(300)];

function paths(v: Json, prefix: string[] = []): string[][] {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return [];
  return Object.entries(v).flatMap(([k, x]) => [[...prefix, k], ...paths(x, [...prefix, k])]);
}
function mutate(root: Json, path: string[], replacement: Json | typeof DELETE): Json {
  const copy = structuredClone(root) as Record<string, any>;
  let parent = copy;
  for (const p of path.slice(0, -1)) parent = parent[p];
  if (replacement === DELETE) delete parent[path[path.length - 1]!];
  else parent[path[path.length - 1]!] = replacement;
  return copy as Json;
}
const coreLocs = (v: Json) => [...new Set(validateWorkflowConfigurations(v).map((i) => JSON.stringify(i.loc)))].sort();
const ajvLocs = (v: Json) => [...new Set(ajvCheck({ workflow_configurations: structuredClone(v) }).map((i) => JSON.stringify(i.loc)))].sort();

describe('workflowConfigurationsSchema (ajv) and validateWorkflowConfigurations agree', () => {
  it('on the full configuration and on the top-level shape', () => {
    expect(coreLocs(full)).toEqual([]);
    expect(ajvLocs(full)).toEqual([]);
    for (const v of [null, 1, 'x', [], {}] as Json[]) expect(ajvLocs(v)).toEqual(coreLocs(v));
  });

  it('on every mutation of every member', () => {
    let checked = 0;
    for (const path of paths(full)) {
      for (const r of REPLACEMENTS) {
        const v = mutate(full, path, r);
        expect({ path, r: String(typeof r === 'symbol' ? 'delete' : JSON.stringify(r)), locs: ajvLocs(v) }).toEqual({ path, r: String(typeof r === 'symbol' ? 'delete' : JSON.stringify(r)), locs: coreLocs(v) });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });
});
