// The dynamic mode's ranking (runtime/mcp/search.ts) on the real tool table: words, stems, prefixes
// and typos; what an agent would type finds the tool it means first; the caller's filter and the
// result limit; the same answer every time.
import { describe, expect, it } from 'vitest';
import { mcpTools } from '../../generated/mcp-tools.ts';
import { familyDescriptions, operationsById, service } from '../../generated/registry.ts';
import { stem, tokenize, ToolSearch } from '../../runtime/mcp/search.ts';
import { searchDocument } from '../../runtime/mcp/dynamic.ts';
import { buildToolTable } from '../../runtime/mcp/index.ts';

describe('words', () => {
  it('lower-cases, splits camelCase and punctuation, drops stop words, and stems endings', () => {
    expect(tokenize('Create a task for the clientId')).toEqual(['creat', 'task', 'client', 'id']);
    expect(tokenize('svc.tasks.batch_create')).toEqual(['task', 'batch', 'creat']);
    expect(['create', 'creates', 'created', 'creating'].map(stem)).toEqual(['creat', 'creat', 'creat', 'creat']);
    expect(['approve', 'approves', 'approved'].map(stem)).toEqual(['approv', 'approv', 'approv']);
    expect(['entries', 'status', 'process', 'use', 'used', 'runs'].map(stem)).toEqual(['entry', 'status', 'process', 'use', 'used', 'run']);
    expect(tokenize('  ')).toEqual([]);
  });
});

describe('ranking the 54 tools', () => {
  // The documents the runtime searches (runtime/mcp/dynamic.ts).
  const search = new ToolSearch(buildToolTable(mcpTools, operationsById, false).entries.map((e) => searchDocument(e, familyDescriptions)));
  const all = () => true;
  const max = service.limits.mcpSearchMaxResults;

  it.each([
    ['create a task', 'svc.tasks.create'],
    ['comment on a task', 'svc.tasks.comment'],
    ['notifications', 'svc.notifications.list'],
    ['cancel an operation', 'svc.operations.cancel'],
    ['search contacts', 'svc.crm.contacts.search'],
    ['advance project stage', 'svc.projects.stage.advance'],
    ['approve', 'svc.approvals.get'],
    ['my scopes', 'svc.meta.get'],
    ['tasks.batch_create', 'svc.tasks.batch_create'],
    ['svc.clients.health', 'svc.clients.health'],
    ['leads', 'svc.crm.lead.create'],
    ['release a review', 'svc.reviews.release'],
  ])('"%s" ranks %s first', (query, tool) => {
    expect(search.search(query, all, max)[0]).toBe(tool);
  });

  it('matches the beginning of a word and a typo of one letter', () => {
    expect(search.search('notif', all, max)).toContain('svc.notifications.list');
    expect(search.search('pipline', all, max).every((n) => n.startsWith('svc.pipeline.') || n.startsWith('svc.operations.'))).toBe(true);
    expect(search.search('pipline', all, max).length).toBeGreaterThan(0);
    expect(search.search('campain', all, max)).toContain('svc.campaigns.list');
  });

  it('answers only allowed names, at most max, in the same order every time, and nothing for no word', () => {
    const allowed = new Set(['svc.tasks.get', 'svc.tasks.list']);
    expect(search.search('create a task', (n) => allowed.has(n), max).sort()).toEqual(['svc.tasks.get', 'svc.tasks.list']);
    expect(search.search('list', all, 3)).toHaveLength(3);
    expect(search.search('list', all, max)).toHaveLength(max);
    expect(search.search('list', all, max)).toEqual(search.search('list', all, max));
    expect(search.search('the of a', all, max)).toEqual([]);
    expect(search.search('zzzzqqq', all, max)).toEqual([]);
  });
});
