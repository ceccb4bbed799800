// crm.*: leads, accounts, contacts, opportunities and touchpoints.
//
// Reads follow visibility rule 3: an operator signed in as a person (Policy.widened) reads every
// row, client-bound and platform (client null), whatever its client scope, and may filter by any
// clientId; client admins and API keys keep their client scope and never see platform rows.
// Writes keep the client scope (writeReach): an operator scoped to Acme reads Globex leads but gets
// 404 touching one; platform rows are written only by operators with every client in reach.
// Every contact leaving the service goes through toContact (Policy.redactPersonalData).
import { and, eq, getTableColumns, ilike, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { clients } from '../runtime/data/schema.ts';
import { accounts, contacts, leads, opportunities, projects, touchpoints } from './data/schema.ts';
import type { SubjectLoader } from '../runtime/pipeline/approval-subjects.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { newDomainId } from './data/ids.ts';
import { pageKeyColumn, startNamePage, startPage } from '../runtime/data/paging.ts';
import { insufficientScope } from '../runtime/problem-documents.ts';
import { invalidField, notFound, ProblemError, type FieldError } from '../runtime/problem-error.ts';
import {
  toAccount,
  toClient,
  toContact,
  toLead,
  toOpportunity,
  toTouchpoint,
  type Account,
  type Contact,
  type Lead,
  type Opportunity,
  type Touchpoint,
} from './mappers/crm.ts';
import { toProject } from './mappers/project.ts';
import { actorName, checkDate, invalidTransition, requireClient, unknownUsers, validationFailed } from './shared.ts';
import type { CrmHandlers } from '../generated/handlers/crm.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];

/** Loads an approval's `opportunity` subject: its client (handlers/index.ts hands it to the registry). */
export const opportunitySubject: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: opportunities.clientId }).from(opportunities).where(eq(opportunities.id, id)).limit(1);
  return row;
};

// ------------------------------------------------------------------------------------------------
// Reach

/** Platform rows (client null) are written only by an operator with every client in reach. */
function canWritePlatformRows(ctx: HandlerContext): boolean {
  return ctx.principal.kind === 'operator' && ctx.policy.allClients;
}

/** Writes keep the client scope (rule 3 widens reads only). */
function canWriteRow(ctx: HandlerContext, clientId: string | null): boolean {
  return clientId === null ? canWritePlatformRows(ctx) : ctx.policy.canReadClient(clientId);
}

/** Rows this caller reads (rule 3), with an optional clientId filter (404 outside the scope for non-widened callers). */
function readFilters(ctx: HandlerContext, column: AnyColumn, clientId: string | undefined): (SQL | undefined)[] {
  ctx.policy.assertWidenedReadClientFilter(clientId);
  return [ctx.policy.widenedReadWhere(column), clientId !== undefined ? eq(column, clientId) : undefined];
}

async function writableRow<T extends { clientId: string | null }>(
  ctx: HandlerContext,
  load: () => Promise<T | undefined>,
  what: string,
): Promise<T> {
  const row = await load();
  if (!row || !canWriteRow(ctx, row.clientId)) throw notFound(what);
  return row;
}

const loadLead = (ctx: HandlerContext, id: string) => ctx.db.select().from(leads).where(eq(leads.id, id)).then((r) => r[0]);
const loadAccount = (ctx: HandlerContext, id: string) => ctx.db.select().from(accounts).where(eq(accounts.id, id)).then((r) => r[0]);
const loadContact = (ctx: HandlerContext, id: string) => ctx.db.select().from(contacts).where(eq(contacts.id, id)).then((r) => r[0]);
const loadOpportunity = (ctx: HandlerContext, id: string) =>
  ctx.db.select().from(opportunities).where(eq(opportunities.id, id)).then((r) => r[0]);

// ------------------------------------------------------------------------------------------------
// Reads

async function leadsList(input: Schemas['CrmLeadsListInput'], ctx: HandlerContext): Promise<Page<Lead>> {
  const { clientId, status, ownerId } = input;
  const scope = readFilters(ctx, leads.clientId, clientId);
  const page = await startPage(ctx.db, input, 'crm.leads.list', { clientId, status, ownerId });
  const rows = await ctx.db
    .select({ ...getTableColumns(leads), pageKey: pageKeyColumn(leads.createdAt) })
    .from(leads)
    .where(
      and(
        ...scope,
        status !== undefined ? eq(leads.status, status) : undefined,
        ownerId !== undefined ? eq(leads.ownerId, ownerId) : undefined,
        page.after(leads.createdAt, leads.id),
      ),
    )
    .orderBy(...page.orderBy(leads.createdAt, leads.id))
    .limit(page.fetch);
  return page.finish(rows, toLead);
}

async function accountsList(input: Schemas['CrmAccountsListInput'], ctx: HandlerContext): Promise<Page<Account>> {
  const { clientId, status } = input;
  const scope = readFilters(ctx, accounts.clientId, clientId);
  const page = await startNamePage(ctx.db, input, 'crm.accounts.list', { clientId, status });
  const rows = await ctx.db
    .select(getTableColumns(accounts))
    .from(accounts)
    .where(and(...scope, status !== undefined ? eq(accounts.status, status) : undefined, page.after(accounts.name, accounts.id)))
    .orderBy(...page.orderBy(accounts.name, accounts.id))
    .limit(page.fetch);
  return page.finish(rows, toAccount);
}

async function contactsPage(
  ctx: HandlerContext,
  input: { cursor?: string; pageSize?: number },
  operation: string,
  filterKey: Record<string, unknown>,
  where: (SQL | undefined)[],
): Promise<Page<Contact>> {
  const page = await startPage(ctx.db, input, operation, filterKey);
  const rows = await ctx.db
    .select({ ...getTableColumns(contacts), pageKey: pageKeyColumn(contacts.createdAt) })
    .from(contacts)
    .where(and(...where, page.after(contacts.createdAt, contacts.id)))
    .orderBy(...page.orderBy(contacts.createdAt, contacts.id))
    .limit(page.fetch);
  return page.finish(rows, (row) => toContact(row, ctx.policy));
}

async function contactsList(input: Schemas['CrmContactsListInput'], ctx: HandlerContext): Promise<Page<Contact>> {
  const { clientId, accountId } = input;
  const scope = readFilters(ctx, contacts.clientId, clientId);
  return contactsPage(ctx, input, 'crm.contacts.list', { clientId, accountId }, [
    ...scope,
    accountId !== undefined ? eq(contacts.accountId, accountId) : undefined,
  ]);
}

/** LIKE pattern matching `text` literally anywhere (wildcards escaped). */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

async function contactsSearch(input: Schemas['CrmContactsSearchInput'], ctx: HandlerContext): Promise<Page<Contact>> {
  const { query, email, phone, clientId, accountId } = input;
  // Without pii:read, criteria on personal fields would confirm a person by counts or order: refused.
  if (!ctx.policy.canReadPersonalData && (email !== undefined || phone !== undefined)) {
    throw insufficientScope('pii:read', 'Searching contacts by email or phone');
  }
  const scope = readFilters(ctx, contacts.clientId, clientId);
  let digits: string | undefined;
  if (phone !== undefined) {
    digits = phone.replace(/\D/g, '');
    if (digits.length === 0) throw invalidField('/phone', 'must contain digits');
  }
  let text: SQL | undefined;
  if (query !== undefined) {
    const pattern = containing(query.trim());
    text = ctx.policy.canReadPersonalData
      ? or(
          ilike(contacts.name, pattern),
          ilike(contacts.email, pattern),
          ilike(contacts.phone, pattern),
          ilike(contacts.jobTitle, pattern),
          ...(query.replace(/\D/g, '').length > 0 ? [sql`${contacts.phoneDigits} like ${containing(query.replace(/\D/g, ''))}`] : []),
        )
      : ilike(contacts.jobTitle, pattern);
  }
  // The cursor binds the criteria; it never travels in a URL (POST body), so personal data stays out of URLs too.
  return contactsPage(ctx, input, 'crm.contacts.search', { query, email, phone: digits, clientId, accountId, pii: ctx.policy.canReadPersonalData }, [
    ...scope,
    text,
    email !== undefined ? sql`lower(${contacts.email}) = lower(${email})` : undefined,
    digits !== undefined ? eq(contacts.phoneDigits, digits) : undefined,
    accountId !== undefined ? eq(contacts.accountId, accountId) : undefined,
  ]);
}

async function opportunitiesList(input: Schemas['CrmOpportunitiesListInput'], ctx: HandlerContext): Promise<Page<Opportunity>> {
  const { clientId, accountId, stage } = input;
  const scope = readFilters(ctx, opportunities.clientId, clientId);
  const page = await startPage(ctx.db, input, 'crm.opportunities.list', { clientId, accountId, stage });
  const rows = await ctx.db
    .select({ ...getTableColumns(opportunities), pageKey: pageKeyColumn(opportunities.createdAt) })
    .from(opportunities)
    .where(
      and(
        ...scope,
        accountId !== undefined ? eq(opportunities.accountId, accountId) : undefined,
        stage !== undefined ? eq(opportunities.stage, stage) : undefined,
        page.after(opportunities.createdAt, opportunities.id),
      ),
    )
    .orderBy(...page.orderBy(opportunities.createdAt, opportunities.id))
    .limit(page.fetch);
  return page.finish(rows, toOpportunity);
}

// ------------------------------------------------------------------------------------------------
// Writes

async function leadCreate(input: Schemas['CrmLeadCreateInput'], ctx: HandlerContext): Promise<Lead> {
  const errors: FieldError[] = [];
  let clientId: string | null = null;
  if (input.clientId !== undefined) {
    ctx.policy.assertClientInScope(input.clientId);
    await requireClient(ctx.db, input.clientId);
    clientId = input.clientId;
  } else if (!canWritePlatformRows(ctx)) {
    errors.push({ pointer: '/clientId', message: 'is required: only an operator with every client in reach makes a platform lead' });
  }
  if (input.accountId !== undefined) {
    const account = await writableRow(ctx, () => loadAccount(ctx, input.accountId!), 'Account');
    if (errors.length === 0 && account.clientId !== clientId) errors.push({ pointer: '/accountId', message: "must belong to the lead's client" });
  }
  if (input.contactId !== undefined) {
    const contact = await writableRow(ctx, () => loadContact(ctx, input.contactId!), 'Contact');
    if (errors.length === 0 && contact.clientId !== clientId) errors.push({ pointer: '/contactId', message: "must belong to the lead's client" });
  }
  errors.push(...(await unknownUsers(ctx.db, input.ownerId ? [{ pointer: '/ownerId', id: input.ownerId }] : [])));
  if (errors.length > 0) throw validationFailed(errors);
  const [row] = await ctx.db
    .insert(leads)
    .values({
      id: newId('led'),
      clientId,
      title: input.title,
      company: input.company,
      source: input.source ?? 'other',
      status: 'new',
      accountId: input.accountId ?? null,
      contactId: input.contactId ?? null,
      ownerId: input.ownerId ?? null,
      estimatedValue: input.estimatedValue ?? null,
      currency: input.currency ?? 'USD',
      notes: input.notes ?? '',
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  return toLead(row!);
}

async function touchpointLog(input: Schemas['CrmTouchpointLogInput'], ctx: HandlerContext): Promise<Touchpoint> {
  const links: { pointer: string; clientId: string | null }[] = [];
  let lead: typeof leads.$inferSelect | undefined;
  if (input.leadId !== undefined) {
    lead = await writableRow(ctx, () => loadLead(ctx, input.leadId!), 'Lead');
    links.push({ pointer: '/leadId', clientId: lead.clientId });
  }
  if (input.contactId !== undefined) {
    const c = await writableRow(ctx, () => loadContact(ctx, input.contactId!), 'Contact');
    links.push({ pointer: '/contactId', clientId: c.clientId });
  }
  if (input.accountId !== undefined) {
    const a = await writableRow(ctx, () => loadAccount(ctx, input.accountId!), 'Account');
    links.push({ pointer: '/accountId', clientId: a.clientId });
  }
  if (input.opportunityId !== undefined) {
    const o = await writableRow(ctx, () => loadOpportunity(ctx, input.opportunityId!), 'Opportunity');
    links.push({ pointer: '/opportunityId', clientId: o.clientId });
  }
  if (links.length === 0) {
    throw invalidField('/leadId', 'one of leadId, contactId, accountId or opportunityId is required');
  }
  const clientId = links[0]!.clientId;
  const mixed = links.filter((l) => l.clientId !== clientId);
  if (mixed.length > 0) {
    throw validationFailed(mixed.map((l) => ({ pointer: l.pointer, message: `must belong to the same client as ${links[0]!.pointer.slice(1)}` })));
  }
  const [row] = await ctx.db
    .insert(touchpoints)
    .values({
      id: newId('tch'),
      clientId,
      leadId: input.leadId ?? null,
      contactId: input.contactId ?? null,
      accountId: input.accountId ?? null,
      opportunityId: input.opportunityId ?? null,
      channel: input.channel,
      direction: input.direction ?? 'outbound',
      summary: input.summary,
      occurredAt: input.occurredAt !== undefined ? new Date(input.occurredAt) : ctx.now,
      loggedByKind: ctx.principal.kind,
      loggedById: ctx.principal.id,
      loggedByName: await actorName(ctx.db, ctx.principal.id),
      createdAt: ctx.now,
    })
    .returning();
  if (lead && lead.status === 'new') {
    await ctx.db
      .update(leads)
      .set({ status: 'contacted', updatedAt: ctx.now, version: sql`${leads.version} + 1` })
      .where(and(eq(leads.id, lead.id), eq(leads.status, 'new')));
  }
  return toTouchpoint(row!);
}

/** Tier 2, run as the proposer once approved. */
async function opportunityConvert(input: Schemas['CrmOpportunityConvertInput'], ctx: HandlerContext) {
  const opp = await writableRow(ctx, () => loadOpportunity(ctx, input.opportunity_id), 'Opportunity');
  if (opp.convertedProjectId !== null) throw invalidTransition('The opportunity was converted already.');
  if (opp.stage === 'lost') throw invalidTransition('A lost opportunity cannot be converted.');
  checkDate(input.targetDate, '/targetDate');

  let client: typeof clients.$inferSelect;
  if (opp.clientId === null) {
    // A platform opportunity becomes a new client (writableRow already required every client in reach).
    const account = opp.accountId ? await loadAccount(ctx, opp.accountId) : undefined;
    const [created] = await ctx.db
      .insert(clients)
      .values({
        id: newId('client'),
        name: account?.name ?? opp.name,
        status: 'onboarding',
        industry: account?.industry ?? null,
        primaryContactName: null,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .returning();
    client = created!;
  } else {
    client = await requireClient(ctx.db, opp.clientId);
  }
  const [project] = await ctx.db
    .insert(projects)
    .values({
      id: newDomainId('project'),
      clientId: client.id,
      name: input.projectName ?? opp.name,
      description: `Converted from opportunity ${opp.id}.`,
      stage: 'discovery',
      status: 'active',
      startDate: null,
      targetDate: input.targetDate ?? null,
      version: 1,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  const [updated] = await ctx.db
    .update(opportunities)
    .set({
      stage: 'won',
      clientId: client.id,
      convertedProjectId: project!.id,
      convertedAt: ctx.now,
      updatedAt: ctx.now,
      version: sql`${opportunities.version} + 1`,
    })
    .where(and(eq(opportunities.id, opp.id), sql`${opportunities.convertedProjectId} is null`))
    .returning();
  if (!updated) throw new ProblemError('conflict', 'The opportunity changed while converting it; read it again.');
  return { opportunity: toOpportunity(updated), client: toClient(client), project: toProject(project!) };
}

export const crmHandlers = {
  'crm.leads.list': leadsList,
  'crm.accounts.list': accountsList,
  'crm.contacts.list': contactsList,
  'crm.contacts.search': contactsSearch,
  'crm.opportunities.list': opportunitiesList,
  'crm.lead.create': leadCreate,
  'crm.touchpoint.log': touchpointLog,
  'crm.opportunity.convert': opportunityConvert,
} satisfies CrmHandlers;
