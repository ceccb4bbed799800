// npm run conformance's judgement (scripts/mcp-conformance.ts, docs/testing.md "MCP conformance"):
// how a run of the suite is compared with test/mcp-conformance-baseline.yaml, and that the baseline
// keeps its rules. The suite itself needs Node 22+ and runs in CI's conformance step.
import { describe, expect, it } from 'vitest';
import { compare, readBaseline, TARGETS, type Outcome } from '../../scripts/mcp-conformance.ts';

const run = (entries: [string, Outcome, string[]?][]) => new Map(entries.map(([s, outcome, messages]) => [s, { outcome, messages: messages ?? [] }]));
const unknownTool = 'FAILURE ToolsCallSimpleText: Failed: MCP error -32602: Unknown tool: "test_simple_text". tools/list lists the tools you may call.';

describe('the conformance baseline', () => {
  it('passes a run whose failures are all baselined and fail by svc refusing them', () => {
    const results = run([
      ['ping', 'passed'],
      ['tools-call-simple-text', 'failed', [unknownTool]],
    ]);
    expect(compare(results, { 'tools-call-simple-text': 'fixture: calls the tool test_simple_text' })).toEqual([]);
  });

  it('fails on an unexpected failure, a stale entry, an entry naming no scenario and one without its reason', () => {
    const results = run([
      ['ping', 'passed'],
      ['tools-call-simple-text', 'failed', [unknownTool]],
    ]);
    const problems = compare(results, { ping: 'fixture: x', 'no-such-scenario': 'fixture: y', other: 'because' });
    expect(problems.map((p) => p.split(':')[0])).toEqual([
      'stale baseline entry (it passes now; remove it)',
      'unexpected failure',
      'baseline entry names no scenario the suite ran',
      'baseline entry names no scenario the suite ran',
      'baseline entry without its reason ("fixture',
    ]);
  });

  it('fails on a baselined scenario that fails for another reason than a deliberate refusal', () => {
    const results = run([['tools-call-simple-text', 'failed', ['FAILURE ToolsCallSimpleText: Failed: MCP error -32001: Request timed out']]]);
    expect(compare(results, { 'tools-call-simple-text': 'fixture: calls the tool test_simple_text' })).toEqual([
      expect.stringMatching(/^expected failure that fails for another reason/),
    ]);
  });

  it('has a section per target only, each entry a fixture naming the suite\'s test_ fixture or an optional part svc does not offer', () => {
    const baseline = readBaseline();
    expect(Object.keys(baseline).sort()).toEqual(Object.keys(TARGETS).sort());
    for (const [target, entries] of Object.entries(baseline)) {
      for (const [scenario, reason] of Object.entries(entries)) {
        expect(reason, `${target}: ${scenario}`).toMatch(/^(fixture: .*test(_|:\/\/)|not offered: )/);
      }
      const notOffered = Object.entries(entries).filter(([, r]) => r.startsWith('not offered'));
      // docs/decisions.md names these three; a fourth needs its own decision there.
      expect(notOffered.map(([s]) => s).sort(), target).toEqual(['logging-set-level', 'prompts-list', 'server-sse-multiple-streams']);
    }
  });
});
