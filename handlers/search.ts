// search.query: one full-text query across every record the caller can read, best match first.
//
// Matching. Each searchable table keeps a tsvector the database computes (a STORED generated column,
// GIN-indexed; runtime/data/schema.ts SEARCH_PARTS says which columns). The query text is cut into
// lexemes by the same parser (to_tsvector('simple', query)), and every lexeme matches as a prefix
// (`'lexeme':*`), all of them required: "onboard run" finds "Update the onboarding runbook". A query
// with no lexeme (only punctuation) matches nothing.
//
// Score. ts_rank_cd(vector, query, 32): cover density over A (titles, names) > B > C > D weights, with
// normalisation 32 (rank / (rank + 1)), so every score lies in [0, 1); rounded to 6 decimals so the
// cursor carries it exactly. Order: score desc, then id and type ascending (byte order, the same on
// PGlite and PostgreSQL). Cursor: keyset on that triple (runtime/data/paging.ts startScorePage).
// Snippet: ts_headline (plain text) of the matched text beside the title (a description, summary,
// company…) when that matches, else of the title; computed for the page's rows only.
//
// Visibility: a hit appears only when the caller reads the row through its family's own reads.
// - client, project, intake_record, campaign: the client scope (rule 5).
// - review: the client scope; a client admin finds released reviews only (as reviews.list).
// - task and file: rule 1; a widened operator also finds internal ones (client null).
// - lead, account, contact, opportunity: rule 3 extends to search (contract decision): a widened
//   operator finds every CRM row it lists through crm.*, platform rows (client null) included.
// - clientId filter: 404 outside the client scope, except for a widened operator (rule 3 rows of any
//   client are in its reach), as on crm.* lists.
// - Contacts: without pii:read the match runs on search_public (job title only), and title and
//   snippet come from the job title; name, e-mail and phone are neither matched nor shown.
import { and, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { executeRows } from '../runtime/data/client.ts';
import { clients, files, searchTextSql } from '../runtime/data/schema.ts';
import { accounts, campaigns, contacts, intakeRecords, leads, opportunities, projects, reviews, SEARCH_PARTS, tasks } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { startScorePage } from '../runtime/data/paging.ts';
import { searchHitTypeValues, type SearchHitType } from '../generated/contract.ts';
import type { SearchHandlers } from '../generated/handlers/search.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type SearchHit = Schemas['SearchHit'];

interface Source {
  type: SearchHitType;
  table: PgTable;
  id: AnyColumn;
  /** The client the row belongs to (a client's own id for clients). */
  clientId: AnyColumn;
  /** The tsvector matched, for this caller. */
  vector(ctx: HandlerContext): AnyColumn;
  /** The hit's title, for this caller. */
  title(ctx: HandlerContext): SQL;
  /** The rest of the matched text (the vector's columns but the title's), for this caller: the snippet's source. */
  body(ctx: HandlerContext): SQL;
  /** Visibility: the rows this caller reads (undefined: every row). */
  visible(ctx: HandlerContext): SQL | undefined;
}

/** The columns after the first (the title) of a vector's parts, space-joined ('' when none). */
const body = (parts: readonly (readonly [string, string])[]) => (parts.length > 1 ? sql.raw(searchTextSql(parts.slice(1).map(([c]) => c))) : sql`''`);

function source(
  type: SearchHitType,
  table: PgTable & { id: AnyColumn; search: AnyColumn },
  clientId: AnyColumn,
  title: AnyColumn,
  parts: keyof typeof SEARCH_PARTS,
  visible: (ctx: HandlerContext) => SQL | undefined,
): Source {
  return {
    type,
    table,
    id: table.id,
    clientId,
    vector: () => table.search,
    title: () => sql`${title}`,
    body: () => body(SEARCH_PARTS[parts]),
    visible,
  };
}

const clientScope = (column: AnyColumn) => (ctx: HandlerContext) => ctx.policy.clientWhere(column);
const crmReach = (column: AnyColumn) => (ctx: HandlerContext) => ctx.policy.widenedReadWhere(column);

const SOURCES: Record<SearchHitType, Source> = {
  client: source('client', clients, clients.id, clients.name, 'clients', clientScope(clients.id)),
  project: source('project', projects, projects.clientId, projects.name, 'projects', clientScope(projects.clientId)),
  task: source('task', tasks, tasks.clientId, tasks.title, 'tasks', (ctx) => ctx.policy.recordWhere(tasks.clientId)),
  intake_record: source('intake_record', intakeRecords, intakeRecords.clientId, intakeRecords.title, 'intake_records', clientScope(intakeRecords.clientId)),
  review: source('review', reviews, reviews.clientId, reviews.title, 'reviews', (ctx) =>
    and(ctx.policy.clientWhere(reviews.clientId), ctx.principal.kind === 'client_admin' ? eq(reviews.status, 'released') : undefined),
  ),
  lead: source('lead', leads, leads.clientId, leads.title, 'leads', crmReach(leads.clientId)),
  account: source('account', accounts, accounts.clientId, accounts.name, 'accounts', crmReach(accounts.clientId)),
  contact: {
    type: 'contact',
    table: contacts,
    id: contacts.id,
    clientId: contacts.clientId,
    vector: (ctx) => (ctx.policy.canReadPersonalData ? contacts.searchPii : contacts.searchPublic),
    title: (ctx) => (ctx.policy.canReadPersonalData ? sql`${contacts.name}` : sql`coalesce(${contacts.jobTitle}, 'Contact')`),
    // With pii:read: e-mail, phone and job title (the digits column only helps matching); without: none (the title is the job title).
    body: (ctx) => (ctx.policy.canReadPersonalData ? sql.raw(searchTextSql(['email', 'phone', 'job_title'])) : sql`''`),
    visible: crmReach(contacts.clientId),
  },
  opportunity: source('opportunity', opportunities, opportunities.clientId, opportunities.name, 'opportunities', crmReach(opportunities.clientId)),
  campaign: source('campaign', campaigns, campaigns.clientId, campaigns.name, 'campaigns', clientScope(campaigns.clientId)),
  // Files follow files.*: client-bound ones by client scope, internal ones (client null) for widened operators.
  file: source('file', files, files.clientId, files.name, 'files', (ctx) => ctx.policy.recordWhere(files.clientId)),
};

/** The tsquery text for a search text: its lexemes (the documents' own parser), each a prefix, all required. */
async function prefixQuery(ctx: HandlerContext, query: string): Promise<string | null> {
  const rows = await executeRows<{ lexeme: string }>(
    ctx.db,
    sql`select lexeme from unnest(to_tsvector('simple'::regconfig, ${query})) order by lexeme collate "C"`,
  );
  if (rows.length === 0) return null;
  // Quoted lexemes: a quote is doubled and a backslash escaped (tsquery's own quoting).
  return rows.map((r) => `'${r.lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}':*`).join(' & ');
}

/** ts_headline options: plain text (no highlight markers), about a dozen to thirty words. */
const HEADLINE = sql.raw(`'StartSel="", StopSel="", MaxWords=30, MinWords=12'`); // not a contract limit

interface HitRow extends Record<string, unknown> {
  type: SearchHitType;
  id: string;
  client_id: string | null;
  title: string | null;
  snippet: string | null;
  score: string;
}

async function query(input: Schemas['SearchQueryInput'], ctx: HandlerContext): Promise<Page<SearchHit>> {
  const { clientId } = input;
  const wanted = input.types ? searchHitTypeValues.filter((t) => input.types!.includes(t)) : searchHitTypeValues;
  ctx.policy.assertWidenedReadClientFilter(clientId);
  const page = await startScorePage(ctx.db, input, 'search.query', { query: input.query, types: wanted.join(','), clientId });
  const tsquery = await prefixQuery(ctx, input.query);
  if (tsquery === null) return page.finish([] as HitRow[], toHit);

  const q = sql`${tsquery}::tsquery`;
  const branches = wanted.map((type) => {
    const s = SOURCES[type];
    const vector = s.vector(ctx);
    return sql`select ${type}::text as type, ${s.id} as id, ${s.clientId} as client_id, ${s.title(ctx)} as title, ${s.body(ctx)} as body,
      round(ts_rank_cd(${vector}, ${q}, 32)::numeric, 6) as score
      from ${s.table}
      where ${and(sql`${vector} @@ ${q}`, s.visible(ctx), clientId !== undefined ? eq(s.clientId, clientId) : undefined)}`;
  });
  const pos = page.position;
  const after = pos
    ? sql`where hits.score < ${pos.score}::numeric
        or (hits.score = ${pos.score}::numeric and (hits.id collate "C", hits.type collate "C") > (${pos.id}::text collate "C", ${pos.type}::text collate "C"))`
    : sql``;
  const rows = await executeRows<HitRow>(
    ctx.db,
    sql`select p.type, p.id, p.client_id, p.title, p.score::text as score,
        case when p.body <> '' and to_tsvector('simple'::regconfig, p.body) @@ ${q}
          then ts_headline('simple'::regconfig, p.body, ${q}, ${HEADLINE})
          else ts_headline('simple'::regconfig, coalesce(p.title, ''), ${q}, ${HEADLINE}) end as snippet
      from (
        select * from (${sql.join(branches, sql` union all `)}) hits
        ${after}
        order by hits.score desc, hits.id collate "C", hits.type collate "C"
        limit ${page.fetch}
      ) p
      order by p.score desc, p.id collate "C", p.type collate "C"`,
  );
  return page.finish(rows, toHit);
}

function toHit(row: HitRow): SearchHit {
  return {
    type: row.type,
    id: row.id,
    clientId: row.client_id,
    title: row.title ?? '',
    snippet: (row.snippet ?? '').trim(),
    score: Number(row.score),
  };
}

export const searchHandlers = {
  'search.query': query,
} satisfies SearchHandlers;
