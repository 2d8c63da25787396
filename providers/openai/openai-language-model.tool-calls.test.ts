import { describe, expect, it } from '@jest/globals';
import { ToolCallJoiner } from './openai-language-model.tool-calls.js';

describe('ToolCallJoiner', () => {
  it('joins fragmented arguments by index (OpenAI: id and name first, arguments over later fragments)', () => {
    const j = new ToolCallJoiner();
    j.add({ index: 0, id: 'call_a', type: 'function', function: { name: 'look_up', arguments: '' } });
    j.add({ index: 0, function: { arguments: '{"da' } });
    j.add({ index: 0, function: { arguments: 'y": "Tue' } });
    j.add({ index: 0, function: { arguments: 'sday"}' } });
    expect(j.calls()).toEqual([{ id: 'call_a', name: 'look_up', arguments: '{"day": "Tuesday"}' }]);
  });

  it('keeps parallel calls apart by index, even when their fragments interleave', () => {
    const j = new ToolCallJoiner();
    j.add({ index: 0, id: 'call_a', function: { name: 'a', arguments: '{"x":' } });
    j.add({ index: 1, id: 'call_b', function: { name: 'b', arguments: '{"y":' } });
    j.add({ index: 0, function: { arguments: '1}' } });
    j.add({ index: 1, function: { arguments: '2}' } });
    expect(j.calls()).toEqual([
      { id: 'call_a', name: 'a', arguments: '{"x":1}' },
      { id: 'call_b', name: 'b', arguments: '{"y":2}' },
    ]);
  });

  it('starts a new call when a new id arrives at an index already seen (servers that repeat index 0)', () => {
    const j = new ToolCallJoiner();
    j.add({ index: 0, id: 'call_a', function: { name: 'a', arguments: '{"x"' } });
    j.add({ index: 0, function: { arguments: ':1}' } });
    j.add({ index: 0, id: 'call_b', function: { name: 'b', arguments: '{}' } });
    j.add({ index: 0, id: 'call_c', function: { name: 'c' } });
    j.add({ index: 0, function: { arguments: '{"z":3}' } });
    expect(j.calls()).toEqual([
      { id: 'call_a', name: 'a', arguments: '{"x":1}' },
      { id: 'call_b', name: 'b', arguments: '{}' },
      { id: 'call_c', name: 'c', arguments: '{"z":3}' },
    ]);
  });

  it('does not double a name or an id a server repeats in every fragment', () => {
    const j = new ToolCallJoiner();
    j.add({ index: 0, id: 'call_a', function: { name: 'look_up', arguments: '{"day":' } });
    j.add({ index: 0, id: 'call_a', function: { name: 'look_up', arguments: '"Mon"}' } });
    expect(j.calls()).toEqual([{ id: 'call_a', name: 'look_up', arguments: '{"day":"Mon"}' }]);
  });

  it('names a call without an id call_<n>, treats a missing index as 0, and empty arguments as {}', () => {
    const j = new ToolCallJoiner();
    j.add({ function: { name: 'end_call' } });
    expect(j.calls()).toEqual([{ id: 'call_0', name: 'end_call', arguments: '{}' }]);
  });

  it('drops a fragment series that never named a function', () => {
    const j = new ToolCallJoiner();
    j.add({ index: 0, id: 'call_a', function: { arguments: '{}' } });
    expect(j.size).toBe(1);
    expect(j.calls()).toEqual([]);
  });
});
