import { describe, expect, it } from '@jest/globals';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { validateWorkflowDefinition } from '../../core/workflows/validate-workflow-definition.js';
import { workflowDefinitionSchema } from '../../core/workflows/workflow-definition.schema.js';
import type { JsonSchema } from '../routing/route.js';
import { compileValidator } from '../validation/ajv.js';

/**
 * The route validates `workflow_definition` twice: ajv with `workflowDefinitionSchema` (structure, also what the
 * OpenAPI document shows), then `validateWorkflowDefinition` (structure again, plus the graph rules). If the two
 * disagreed on structure, a definition could pass the documented schema and fail with a surprise, or the reverse.
 * This test mutates every field of a definition that uses every optional field and checks that both accept
 * the same values and put their structural issues at the same `loc`s.
 */
const ajvCheck = compileValidator(workflowDefinitionSchema as unknown as JsonSchema, 'body');

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

function full(): Json {
  const def = structuredClone(exampleWorkflowDefinition) as unknown as { nodes: Record<string, Json>[] };
  const start = def.nodes[0]!.data as Record<string, Json>;
  start.extraction_enabled = false;
  start.extraction_variables = [{ name: 'mood', type: 'string', prompt: 'How the caller sounds' }];
  (def.nodes[3]!.data as Record<string, Json>).greeting = 'Bye';
  return def as unknown as Json;
}

/** Every path in `value` that leads to an object member or array item. */
function paths(value: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...prefix, i], ...paths(v, [...prefix, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...paths(v, [...prefix, k]));
  return out;
}

function mutate(root: Json, path: Path, replacement: Json | typeof DELETE): Json {
  const copy = structuredClone(root);
  let parent: any = copy;
  for (const p of path.slice(0, -1)) parent = parent[p];
  const last = path[path.length - 1]!;
  if (replacement === DELETE) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = replacement;
  return copy;
}
const DELETE = Symbol('delete');
const REPLACEMENTS: (Json | typeof DELETE)[] = [DELETE, null, 42, 1.5, 'text', '', '   ', true, [], {}];

function structuralLocs(def: Json): string[] {
  return [...new Set(validateWorkflowDefinition(def, ['body'])
    .filter((i) => !i.type.startsWith('workflow.'))
    .map((i) => JSON.stringify(i.loc)))].sort();
}
function ajvLocs(def: Json): string[] {
  return [...new Set(ajvCheck(structuredClone(def)).map((i) => JSON.stringify(i.loc)))].sort();
}

describe('workflowDefinitionSchema (ajv) and validateWorkflowDefinition agree on structure', () => {
  it('both accept the fully-featured definition', () => {
    expect(ajvLocs(full())).toEqual([]);
    expect(validateWorkflowDefinition(full(), ['body'])).toEqual([]);
  });

  it('both refuse the same mutations at the same locations', () => {
    const base = full();
    const disagreements: string[] = [];
    let compared = 0;
    let refused = 0;
    for (const path of paths(base)) {
      for (const replacement of REPLACEMENTS) {
        const def = mutate(base, path, replacement);
        const [a, v] = [ajvLocs(def), structuralLocs(def)];
        compared++;
        if (a.length > 0) refused++;
        if (JSON.stringify(a) !== JSON.stringify(v)) {
          disagreements.push(`${JSON.stringify(path)} := ${replacement === DELETE ? '<deleted>' : JSON.stringify(replacement)}: ajv ${a.join(' ')} | validator ${v.join(' ')}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(300);
  });

  it('agree on non-object roots and missing arrays', () => {
    for (const def of [null, 1, 'x', [], {}, { nodes: [] }, { edges: [] }, { nodes: {}, edges: [] }, { nodes: [], edges: [] }] as Json[]) {
      expect([def, ajvLocs(def)]).toEqual([def, structuralLocs(def)]);
    }
  });
});
