// The generated guides speak of the contract they are generated from (docs/contract-authors.md, "The
// generated guides"): for the stock fixture and `svc init`'s template, every example request in the
// REST guide is an operation of that contract, every operation id, tool and /v1 path the docs name is
// one it has (or a route the runtime serves every contract), a guide for a surface it lacks (OAuth,
// webhooks) is neither generated nor listed, and nothing of the Platform API's (tasks, clients,
// meta.get, OAuth, webhook endpoints, personal data) is left. exampleValue builds the write example's
// body: a small deterministic function, tested here on its own.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWithModel } from '../../generator/generate.ts';
import type { Model } from '../../generator/model.ts';
import { ContractError } from '../../generator/source.ts';
import { exampleObject, exampleValue } from '../../generator/emit/example-value.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('guides');
afterAll(() => tmp.cleanup());

describe('exampleValue', () => {
  it('takes the schema’s own example, default, const or first enum value first', () => {
    expect(exampleValue({ type: 'string', examples: ['BOLT-M6'], default: 'x' })).toBe('BOLT-M6');
    expect(exampleValue({ type: 'integer', default: 0 })).toBe(0);
    expect(exampleValue({ const: 'v1' })).toBe('v1');
    expect(exampleValue({ type: 'string', enum: ['open', 'closed'] })).toBe('open');
  });

  it('gives a value its format, pattern and bounds accept', () => {
    expect(exampleValue({ type: 'string', format: 'date-time' })).toBe('2025-01-31T09:00:00Z');
    expect(exampleValue({ type: 'string', format: 'email' })).toBe('someone@example.com');
    expect(exampleValue({ type: 'string', pattern: '^itm_[A-Za-z0-9_-]+$' })).toMatch(/^itm_[A-Za-z0-9_-]+$/);
    expect(exampleValue({ type: 'string', pattern: '^[A-Z0-9-]+$' })).toMatch(/^[A-Z0-9-]+$/);
    expect(exampleValue({ type: 'string', minLength: 10 })).toHaveLength(10);
    expect(exampleValue({ type: 'string', maxLength: 3 })).toHaveLength(3);
    expect(exampleValue({ type: 'integer', minimum: 5, maximum: 9 })).toBe(5);
    expect(exampleValue({ type: 'integer', minimum: -10, maximum: 0 })).toBe(0);
    expect(exampleValue({ type: 'integer', minimum: 0, maximum: 3, not: { const: 1 } })).toBe(2);
    expect(exampleValue({ type: 'boolean' })).toBe(true);
    expect(exampleValue({ type: 'array', minItems: 2, items: { type: 'string', enum: ['a'] } })).toEqual(['a', 'a']);
    expect(exampleValue({ type: 'array', items: { type: 'string' } })).toEqual([]);
  });

  it('follows references and fills only the required properties, in the schema’s order', () => {
    const schemas = { Sku: { type: 'string', pattern: '^[A-Z]+$' }, Draft: { type: 'object', required: ['sku', 'name'], properties: { name: { type: 'string' }, sku: { $ref: '#/components/schemas/Sku' }, note: { type: 'string' } } } };
    expect(exampleObject({ $ref: '#/components/schemas/Draft' }, schemas)).toEqual({ name: 'example', sku: 'EXAMPLE' });
    expect(Object.keys(exampleObject(schemas.Draft, schemas))).toEqual(['name', 'sku']);
    expect(exampleObject(schemas.Draft, schemas, ['sku'])).toEqual({ name: 'example' });
    // The same schema, the same value: generated/ does not change between runs.
    expect(JSON.stringify(exampleObject(schemas.Draft, schemas))).toBe(JSON.stringify(exampleObject(schemas.Draft, schemas)));
  });
});

/** Routes the runtime serves for every contract, which the docs may name beside the operations. */
const RUNTIME_ROUTES = [/^\/v1\/openapi\.json$/, /^\/v1\/docs$/, /^\/v1\/health(\/live)?$/, /^\/v1\/agent-guide\.md$/, /^\/v1\/reference\/[a-z_]+\.md$/];

/** The operation whose method and path template a concrete request matches. */
function operationOf(model: Model, method: string, url: string) {
  const pathOnly = url.split('?')[0]!;
  return model.operations.find((o) => {
    const pattern = new RegExp(`^${o.def.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}$`);
    return o.def.method === method && pattern.test(pathOnly);
  });
}

/** Each `curl` request of a Markdown text: its method and URL path (after {base_url}). */
function curlRequests(markdown: string): { method: string; url: string }[] {
  const lines = markdown.split('\n').filter((l) => l.trimStart().startsWith('curl '));
  return lines.map((line) => ({
    method: /-X ([A-Z]+)/.exec(line)?.[1] ?? 'GET',
    url: /\{base_url\}(\S+?)["'\s]/.exec(`${line} `)![1]!,
  }));
}

/** The docs' files; the problem catalogue's rows left out (the standard problems name If-Match for every contract). */
const docsOf = (files: Map<string, string>) =>
  [...files].filter(([rel]) => rel.startsWith('docs/')).map(([rel, text]) => [rel, text.replace(/^\|.*\| \d{3} \| (after_fix|after_delay|now).*$/gm, '')] as const);

/** `svc init`'s template, its changelog dated as init dates it (generator/init.ts). */
function initTemplate(): string {
  const dir = path.join(tmp.dir, 'init-template');
  cpSync('project-template/contract', dir, { recursive: true });
  const file = path.join(dir, 'svc.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('{{today}}', '2026-01-31'));
  return dir;
}

/** What the Platform API's docs said of itself, and a contract without those things must not say. */
const PLATFORM_WORDS = [/\btasks?\b/i, /clientId/, /cli_/, /client (administrator|scope|admin)/i, /meta\.get/, /\/v1\/meta\b/, /oauth/i, /access token/i, /webhook-endpoints/, /webhook endpoint/i, /Standard Webhooks/, /\bpii\b/i, /Prepare kickoff/, /If-Match(?!: none)/, /proposed/];

describe.each([
  ['the stock fixture', 'test/fixtures/stock-api/contract'],
  ['the init template', null],
])('the docs of %s', (_name, dir) => {
  const compiled = compileWithModel(dir ?? initTemplate());

  it('have no OAuth or webhooks guide, and list none', async () => {
    const { files } = await compiled;
    expect([...files.keys()].filter((f) => f.startsWith('docs/guides/')).sort()).toEqual(['docs/guides/errors.md', 'docs/guides/mcp.md', 'docs/guides/rest.md']);
    const index = JSON.parse(files.get('docs/search-index.json')!) as { entries: { kind: string; url: string }[] };
    expect(index.entries.filter((e) => e.kind === 'guide').map((e) => e.url)).toEqual(['/docs/rest', '/docs/mcp', '/docs/errors']);
    expect(files.get('docs/llms.txt')).not.toMatch(/\/docs\/(oauth|webhooks)/);
  });

  it('send every example request to an operation of the contract', async () => {
    const { files, model } = await compiled;
    const requests = curlRequests(files.get('docs/guides/rest.md')!);
    expect(requests.map((r) => r.method)).toEqual(['GET', 'POST']);
    for (const r of requests) expect(operationOf(model, r.method, r.url), `${r.method} ${r.url}`).toBeDefined();
    const write = operationOf(model, 'POST', requests[1]!.url)!;
    const body = JSON.parse(/-d '([^']*)'/.exec(files.get('docs/guides/rest.md')!)![1]!) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(write.inputs.filter((i) => i.required && i.location === 'body').map((i) => i.name).sort());
  });

  it('name only its operations, tools and paths, and nothing of the Platform API', async () => {
    const { files, model } = await compiled;
    const ids = new Set(model.operations.map((o) => o.def.id));
    const tools = new Set(model.operations.flatMap((o) => (o.def.mcp ? [o.def.mcp.name] : [])));
    const events = new Set(model.eventTypes.map((e) => e.name));
    const prefix = model.service.mcpToolPrefix ?? 'svc';
    for (const [rel, text] of docsOf(files)) {
      for (const word of PLATFORM_WORDS) expect(text, `${rel}: ${word}`).not.toMatch(word);
      // A dotted name in backticks is an operation, a tool or an event type of the contract (or a file name).
      for (const [, id] of text.matchAll(/`([a-z_]+\.[a-z_]+)`/g))
        if (!/\.(json|md|txt|ya?ml)$/.test(id!)) expect(ids.has(id!) || tools.has(id!) || events.has(id!), `${rel}: ${id}`).toBe(true);
      for (const [tool] of text.matchAll(new RegExp(`\\b${prefix}\\.[a-z_]+\\.[a-z_]+\\b`, 'g'))) expect(tools.has(tool), `${rel}: ${tool}`).toBe(true);
      for (const [p] of text.matchAll(/\/v1\/[^\s`"'),:?]+/g)) {
        const known = model.operations.some((o) => p === o.def.path || p === o.def.path.split(':')[0]) || RUNTIME_ROUTES.some((r) => r.test(p));
        expect(known || operationOf(model, 'GET', p) || operationOf(model, 'POST', p), `${rel}: ${p}`).toBeTruthy();
      }
    }
  });

  it('call a read tool of the contract in the MCP guide', async () => {
    const { files, model } = await compiled;
    const call = /callTool\(\{ name: '([^']+)', arguments: (.*) \}\)/.exec(files.get('docs/guides/mcp.md')!)!;
    const op = model.operations.find((o) => o.def.mcp?.name === call[1]);
    expect(op?.def.kind).toBe('read');
    expect(JSON.parse(call[2]!)).toEqual({});
  });
});

describe('the Platform API’s docs', () => {
  it('show the examples its svc.yaml guideExamples names, each an operation of it', async () => {
    const { files, model } = await compileWithModel('contract');
    const rest = files.get('docs/guides/rest.md')!;
    const requests = curlRequests(rest);
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/meta', 'GET /v1/tasks?pageSize=20', 'POST /v1/tasks']);
    for (const r of requests) expect(operationOf(model, r.method, r.url)).toBeDefined();
    expect(rest).toContain(`-d '{"title":"Prepare kickoff","clientId":"cli_..."}'`);
    expect([...files.keys()].filter((f) => f.startsWith('docs/guides/')).sort()).toEqual(['errors', 'mcp', 'oauth', 'rest', 'webhooks'].map((s) => `docs/guides/${s}.md`));
    expect(files.get('docs/guides/mcp.md')).toContain("name: 'svc.meta.get', arguments: {}");
  }, 60_000);
});

describe('svc.yaml guideExamples', () => {
  /** A copy of the stock fixture's contract with `lines` added to svc.yaml. */
  function stockWith(lines: string): string {
    const dir = path.join(tmp.dir, `contract-${Math.random().toString(36).slice(2)}`);
    cpSync('test/fixtures/stock-api/contract', dir, { recursive: true });
    const file = path.join(dir, 'svc.yaml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n${lines}\n`);
    return dir;
  }

  it('names the write example and its body', async () => {
    const { files } = await compileWithModel(stockWith('guideExamples:\n  create: items.adjust\n  body: { delta: 5 }'));
    const rest = files.get('docs/guides/rest.md')!;
    expect(rest).toMatch(/curl -s -X POST \{base_url\}\/v1\/items\/itm_example:adjust /);
    expect(rest).toContain(`-d '{"delta":5}'`);
  });

  it.each([
    ['list: items.missing', 'guideExamples.list names items.missing, which is not an operation of this contract'],
    ['list: items.get', 'guideExamples.list names items.get, which is not a paged GET read'],
    ['create: items.list', 'guideExamples.create names items.list, which is not a POST command'],
  ])('refuses %s where it is written', async (line, message) => {
    const err = await compileWithModel(stockWith(`guideExamples:\n  ${line}`)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContractError);
    expect((err as ContractError).message).toContain(message);
    expect((err as ContractError).message).toContain('svc.yaml:');
  });
});
