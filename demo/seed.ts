// The demo workspace (`svc seed`, `npm start`): clients, people with every role label, projects,
// internal and client-bound tasks with co-assignees, an allowlisted OAuth client with grants, and
// two API keys. Idempotent: fixed ids, inserted only when missing, so running it twice is fine.
// API keys are the exception: their secrets are shown once and only hashes are stored, so every
// run creates fresh keys and returns their secrets (keys from earlier runs keep working until
// they expire or are revoked).
import { and, eq } from 'drizzle-orm';
import { service } from '../generated/registry.ts';
import { displayPrefix, generateApiKeySecret, hashSecret, type KeyMode } from '../runtime/auth/secrets.ts';
import type { Database, Db } from '../runtime/data/client.ts';
import { apiKeys, clients, memberships, notifications, oauthClients, oauthGrants, users } from '../runtime/data/schema.ts';
import { accounts, campaignRecipients, campaigns, contacts, leads, opportunities, projects, reviews, taskComments, tasks, touchpoints } from '../handlers/data/schema.ts';
import { newId } from '../runtime/data/ids.ts';
import { seedActivity, type SeedActivityOptions } from './seed-activity.ts';
import { limits } from '../generated/contract.ts';

/** A table's insert row type, so the seed's factories take the contract's enum unions. */
type Insert<T extends { $inferInsert: unknown }> = T['$inferInsert'];

/** limits.apiKeyLifetimeDays. */
export const API_KEY_LIFETIME_DAYS = limits.apiKeyLifetimeDays;

export interface SeedOptions {
  baseUrl: string;
  /** Key mode of the created API keys (default test: svc_sk_test_…). */
  keyMode?: KeyMode;
  now?: Date;
  /**
   * Demo activity (intake records, the census file and its extraction, executed pipeline runs:
   * demo/seed-activity.ts). `svc serve --demo` and `svc seed` pass it; the test suite's seed
   * leaves it out, so its counts start from the base workspace.
   */
  activity?: SeedActivityOptions;
}

export interface SeedCredentials {
  baseUrl: string;
  /** API key with every scope, owned by the owner operator, not bound to clients (operator principal, never widened: no internal tasks). */
  operatorKey: string;
  operatorKeyId: string;
  /** API key bound to clientId (service_account principal). */
  serviceKey: string;
  serviceKeyId: string;
  /** The client the service key and the client admin reach. */
  clientId: string;
  /** A client the service key and the client admin cannot see. */
  otherClientId: string;
  /** A third client. */
  thirdClientId: string;
  /** Allowlisted OAuth client (scope ceiling: every scope but audit:read). */
  oauthClientId: string;
  /** OAuth subjects of seeded people. operatorSub is the owner (all clients). */
  operatorSub: string;
  adminSub: string;
  staffOperatorSub: string;
  scopedOperatorSub: string;
  viewerSub: string;
  clientAdminSub: string;
  /** User ids. */
  operatorUserId: string;
  adminUserId: string;
  staffOperatorUserId: string;
  scopedOperatorUserId: string;
  viewerUserId: string;
  clientAdminUserId: string;
  /** Some seeded records, handy in examples and tests. */
  projectId: string;
  otherProjectId: string;
  taskId: string;
  internalTaskId: string;
}

const ID = {
  clientAcme: 'cli_demo_acme',
  clientGlobex: 'cli_demo_globex',
  clientInitech: 'cli_demo_initech',
  owner: 'usr_demo_owner',
  admin: 'usr_demo_admin',
  staff: 'usr_demo_operator',
  scoped: 'usr_demo_scoped',
  viewer: 'usr_demo_viewer',
  clientAdmin: 'usr_demo_client_admin',
  oauthClient: 'oac_demo_agent',
} as const;

const SUB = {
  owner: 'demo|owner',
  admin: 'demo|admin',
  staff: 'demo|operator',
  scoped: 'demo|scoped-operator',
  viewer: 'demo|viewer',
  clientAdmin: 'demo|client-admin',
} as const;

/**
 * Membership roles of the client admin. A client-admin membership role is a permission when it is
 * a scope name (visibility rule 6), so the admin holds one membership per permission it needs.
 */
const CLIENT_ADMIN_ROLES = [
  'clients:read',
  'projects:read',
  'tasks:read',
  'tasks:write',
  'actions:read',
  'notifications:read',
  'intake:read',
  'intake:write',
  'extraction:read',
  'pipeline:read',
  'reviews:read',
  'files:read',
  'files:write',
  'search:read',
  'approvals:read',
  'operations:read',
  'events:read',
  'crm:read',
  'campaigns:read',
  'campaigns:propose',
  'memberships:manage',
  // The README's promise: client admins manage their client's webhook endpoints.
  'webhooks:manage',
];

export async function seed(database: Database, options: SeedOptions): Promise<SeedCredentials> {
  const now = options.now ?? new Date();
  const keyMode = options.keyMode ?? 'test';
  const allScopes = [...service.scopes];
  return database.transaction(async (tx) => {
    await seedWorkspace(tx, now, allScopes);
    if (options.activity) {
      await seedActivity(tx, (daysAgo, minutes = 0) => new Date(now.getTime() - daysAgo * 86_400_000 - minutes * 60_000), options.baseUrl, options.activity);
    }
    const expiresAt = new Date(now.getTime() + API_KEY_LIFETIME_DAYS * 86_400_000);
    const operator = await createKey(tx, {
      ownerUserId: ID.owner,
      name: 'Demo operator key (every scope)',
      mode: keyMode,
      scopes: allScopes,
      clientIds: [],
      now,
      expiresAt,
    });
    const serviceKey = await createKey(tx, {
      ownerUserId: ID.owner,
      name: `Demo service key (${ID.clientAcme})`,
      mode: keyMode,
      scopes: allScopes,
      clientIds: [ID.clientAcme],
      now,
      expiresAt,
    });
    // A rotated key (fixed id, written once): rotated today, so its 90 days restart today; its
    // secret is never handed out.
    const rotatedSecret = generateApiKeySecret(keyMode);
    await tx
      .insert(apiKeys)
      .values({
        id: 'key_demo_rotated',
        ownerUserId: ID.owner,
        name: 'Demo rotated key (read-only reports)',
        mode: keyMode,
        prefix: displayPrefix(rotatedSecret),
        secretHash: hashSecret(rotatedSecret),
        scopes: ['clients:read', 'projects:read'],
        clientIds: [],
        ipAllowlist: [],
        createdAt: new Date(now.getTime() - 10 * 86_400_000),
        rotatedAt: now,
        expiresAt,
      })
      .onConflictDoNothing({ target: apiKeys.id });
    return {
      baseUrl: options.baseUrl,
      operatorKey: operator.secret,
      operatorKeyId: operator.id,
      serviceKey: serviceKey.secret,
      serviceKeyId: serviceKey.id,
      clientId: ID.clientAcme,
      otherClientId: ID.clientGlobex,
      thirdClientId: ID.clientInitech,
      oauthClientId: ID.oauthClient,
      operatorSub: SUB.owner,
      adminSub: SUB.admin,
      staffOperatorSub: SUB.staff,
      scopedOperatorSub: SUB.scoped,
      viewerSub: SUB.viewer,
      clientAdminSub: SUB.clientAdmin,
      operatorUserId: ID.owner,
      adminUserId: ID.admin,
      staffOperatorUserId: ID.staff,
      scopedOperatorUserId: ID.scoped,
      viewerUserId: ID.viewer,
      clientAdminUserId: ID.clientAdmin,
      projectId: 'prj_demo_acme_portal',
      otherProjectId: 'prj_demo_globex_launch',
      taskId: 'tsk_demo_acme_kickoff',
      internalTaskId: 'tsk_demo_internal_hiring',
    };
  });
}

async function createKey(
  tx: Db,
  k: { ownerUserId: string; name: string; mode: KeyMode; scopes: string[]; clientIds: string[]; now: Date; expiresAt: Date },
): Promise<{ id: string; secret: string }> {
  const secret = generateApiKeySecret(k.mode);
  const id = newId('apiKey');
  await tx.insert(apiKeys).values({
    id,
    ownerUserId: k.ownerUserId,
    name: k.name,
    mode: k.mode,
    prefix: displayPrefix(secret),
    secretHash: hashSecret(secret),
    scopes: k.scopes,
    clientIds: k.clientIds,
    ipAllowlist: [],
    createdAt: k.now,
    expiresAt: k.expiresAt,
  });
  return { id, secret };
}

async function seedWorkspace(tx: Db, now: Date, allScopes: string[]): Promise<void> {
  const at = (daysAgo: number, minutes = 0) => new Date(now.getTime() - daysAgo * 86_400_000 - minutes * 60_000);

  await tx
    .insert(clients)
    .values([
      { id: ID.clientAcme, name: 'Acme Benefits Co', status: 'active', industry: 'Manufacturing', primaryContactName: 'Dana Reyes', createdAt: at(60), updatedAt: at(60) },
      { id: ID.clientGlobex, name: 'Globex Health', status: 'onboarding', industry: 'Healthcare', primaryContactName: 'Sam Okafor', createdAt: at(40), updatedAt: at(40) },
      { id: ID.clientInitech, name: 'Initech Software', status: 'prospect', industry: 'Software', primaryContactName: null, createdAt: at(10), updatedAt: at(10) },
    ])
    .onConflictDoNothing({ target: clients.id });

  const emailOf = (id: string) => `${id.replace(/^usr_demo_/, '').replace(/_/g, '.')}@demo.svc.example`;
  const person = (id: string, kind: Insert<typeof users>['kind'], name: string, role: string, sub: string, allClients: boolean) => ({
    id,
    kind,
    name,
    email: emailOf(id),
    role,
    allClients,
    oauthSubject: sub,
    createdAt: at(90),
  });
  await tx
    .insert(users)
    .values([
      person(ID.owner, 'operator', 'Olivia Owner', 'owner', SUB.owner, true),
      person(ID.admin, 'operator', 'Adam Admin', 'admin', SUB.admin, true),
      person(ID.staff, 'operator', 'Oscar Operator', 'operator', SUB.staff, true),
      person(ID.scoped, 'operator', 'Sara Scoped', 'operator', SUB.scoped, false),
      person(ID.viewer, 'operator', 'Victor Viewer', 'viewer', SUB.viewer, true),
      person(ID.clientAdmin, 'client_admin', 'Carla Client-Admin', 'client_admin', SUB.clientAdmin, false),
    ])
    .onConflictDoNothing({ target: users.id });

  const invitedBy = { invitedByKind: 'operator', invitedById: ID.owner };
  const membershipRows: Insert<typeof memberships>[] = [
      { id: 'mem_demo_scoped_acme', userId: ID.scoped, clientId: ID.clientAcme, kind: 'staff', email: emailOf(ID.scoped), role: 'operator', status: 'active', ...invitedBy, createdAt: at(30), acceptedAt: at(30), updatedAt: at(30) },
      ...CLIENT_ADMIN_ROLES.map((role): Insert<typeof memberships> => ({
        id: `mem_demo_ca_${role.replace(':', '_')}`,
        userId: ID.clientAdmin,
        clientId: ID.clientAcme,
        kind: 'client_admin',
        email: emailOf(ID.clientAdmin),
        role,
        status: 'active',
        ...invitedBy,
        createdAt: at(30),
        acceptedAt: at(29),
        updatedAt: at(29),
      })),
      // A pending invitation (14 days from when it was written) and a revoked membership.
      { id: 'mem_demo_invited_acme', userId: null, clientId: ID.clientAcme, kind: 'client_admin', email: 'pat.pending@acme.example', name: 'Pat Pending', role: 'tasks:read', status: 'invited', ...invitedBy, createdAt: at(2), expiresAt: new Date(at(2).getTime() + 14 * 86_400_000), updatedAt: at(2) },
      { id: 'mem_demo_revoked_acme', userId: null, clientId: ID.clientAcme, kind: 'client_admin', email: 'former.admin@acme.example', name: 'Fran Former', role: 'tasks:write', status: 'revoked', ...invitedBy, createdAt: at(50), revokedAt: at(20), updatedAt: at(20) },
  ];
  await tx
    .insert(memberships)
    .values(membershipRows)
    .onConflictDoNothing({ target: memberships.id });

  await tx
    .insert(oauthClients)
    .values({
      id: ID.oauthClient,
      name: 'Demo agent (MCP)',
      allowlisted: true,
      scopeCeiling: allScopes.filter((s) => s !== 'audit:read'),
      createdAt: at(90),
    })
    .onConflictDoNothing({ target: oauthClients.id });

  const grantees = [ID.owner, ID.admin, ID.staff, ID.scoped, ID.viewer, ID.clientAdmin];
  for (const userId of grantees) {
    const [existing] = await tx
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.oauthClientId, ID.oauthClient)));
    if (existing) continue;
    await tx.insert(oauthGrants).values({
      id: `grt_demo_${userId.replace(/^usr_demo_/, '')}`,
      userId,
      oauthClientId: ID.oauthClient,
      scopes: allScopes,
      createdAt: at(30),
    });
  }

  const project = (id: string, clientId: string, name: string, stage: Insert<typeof projects>['stage'], status: Insert<typeof projects>['status'], daysAgo: number) => ({
    id,
    clientId,
    name,
    description: `${name} engagement.`,
    stage,
    status,
    startDate: at(daysAgo).toISOString().slice(0, 10),
    targetDate: new Date(now.getTime() + 60 * 86_400_000).toISOString().slice(0, 10),
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
  });
  await tx
    .insert(projects)
    .values([
      project('prj_demo_acme_portal', ID.clientAcme, 'Benefits portal', 'build', 'active', 45),
      project('prj_demo_acme_enrollment', ID.clientAcme, 'Open enrollment 2027', 'discovery', 'active', 20),
      project('prj_demo_globex_launch', ID.clientGlobex, 'Globex launch', 'onboarding', 'active', 30),
      project('prj_demo_initech_pilot', ID.clientInitech, 'Initech pilot', 'discovery', 'on_hold', 5),
    ])
    .onConflictDoNothing({ target: projects.id });

  const task = (
    id: string,
    clientId: string | null,
    projectId: string | null,
    title: string,
    ownerId: string | null,
    co: string[],
    status: Insert<typeof tasks>['status'],
    daysAgo: number,
    priority: Insert<typeof tasks>['priority'] = 'normal',
  ) => ({
    id,
    clientId,
    projectId,
    title,
    description: '',
    status,
    priority,
    ownerId,
    assigneeIds: [...new Set([...(ownerId ? [ownerId] : []), ...co])],
    dueDate: new Date(now.getTime() + 14 * 86_400_000).toISOString().slice(0, 10),
    createdBy: ID.owner,
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
    completedAt: status === 'done' ? at(daysAgo - 1) : null,
  });
  await tx
    .insert(tasks)
    .values([
      task('tsk_demo_acme_kickoff', ID.clientAcme, 'prj_demo_acme_portal', 'Schedule kickoff call', ID.staff, [ID.scoped], 'in_progress', 12, 'high'),
      task('tsk_demo_acme_census', ID.clientAcme, 'prj_demo_acme_enrollment', 'Collect employee census', ID.scoped, [ID.staff, ID.admin], 'open', 8),
      task('tsk_demo_acme_sso', ID.clientAcme, 'prj_demo_acme_portal', 'Configure SSO', ID.admin, [], 'done', 20),
      task('tsk_demo_acme_review', ID.clientAcme, null, 'Review plan documents', ID.clientAdmin, [ID.staff], 'open', 3),
      task('tsk_demo_globex_contract', ID.clientGlobex, 'prj_demo_globex_launch', 'Countersign contract', ID.owner, [ID.admin], 'blocked', 9, 'urgent'),
      task('tsk_demo_globex_data', ID.clientGlobex, 'prj_demo_globex_launch', 'Import carrier data', ID.staff, [], 'open', 4),
      task('tsk_demo_initech_intro', ID.clientInitech, null, 'Intro meeting', ID.admin, [ID.owner], 'open', 2, 'low'),
      task('tsk_demo_internal_hiring', null, null, 'Hire a second implementation lead', ID.owner, [ID.admin, ID.staff], 'open', 6),
      task('tsk_demo_internal_runbook', null, null, 'Update the onboarding runbook', ID.staff, [ID.scoped, ID.viewer], 'in_progress', 1),
    ])
    .onConflictDoNothing({ target: tasks.id });

  await tx
    .insert(taskComments)
    .values([
      { id: 'cmt_demo_kickoff_1', taskId: 'tsk_demo_acme_kickoff', authorKind: 'operator', authorId: ID.staff, authorName: 'Oscar Operator', body: 'Proposed three slots to Dana.', createdAt: at(11) },
      { id: 'cmt_demo_kickoff_2', taskId: 'tsk_demo_acme_kickoff', authorKind: 'client_admin', authorId: ID.clientAdmin, authorName: 'Carla Client-Admin', body: 'Tuesday works for us.', createdAt: at(10) },
      { id: 'cmt_demo_hiring_1', taskId: 'tsk_demo_internal_hiring', authorKind: 'operator', authorId: ID.admin, authorName: 'Adam Admin', body: 'Two candidates in the final round.', createdAt: at(5) },
    ])
    .onConflictDoNothing({ target: taskComments.id });

  // Notifications as the producers would have written them (runtime/events/notifications.ts): the owner (whose
  // demo keys read them) was assigned the Globex contract task; Oscar saw Carla's comment on the kickoff.
  await tx
    .insert(notifications)
    .values([
      { id: 'ntf_demo_owner_assigned', userId: ID.owner, kind: 'task_assigned', title: 'You were assigned to "Countersign contract"', body: '', clientId: ID.clientGlobex, subjectId: 'tsk_demo_globex_contract', path: '/v1/tasks/tsk_demo_globex_contract', createdAt: at(9) },
      { id: 'ntf_demo_staff_comment', userId: ID.staff, kind: 'comment_added', title: 'New comment on "Schedule kickoff call"', body: 'Tuesday works for us.', clientId: ID.clientAcme, subjectId: 'tsk_demo_acme_kickoff', path: '/v1/tasks/tsk_demo_acme_kickoff/comments', createdAt: at(10) },
    ])
    .onConflictDoNothing({ target: notifications.id });

  await seedReviewsAndCrm(tx, now, at);
}

/**
 * Reviews in each status, CRM rows (accounts, contacts with personal data, leads in each status, open
 * opportunities, a touchpoint) and draft campaigns, for Acme, Globex and the platform itself.
 * Every contact's name, e-mail and phone is listed in SEEDED_PERSONAL_DATA (the personal-data tests
 * look for them in every response a caller without pii:read gets).
 */
async function seedReviewsAndCrm(tx: Db, now: Date, at: (daysAgo: number, minutes?: number) => Date): Promise<void> {
  const review = (id: string, clientId: string, projectId: string | null, title: string, kind: Insert<typeof reviews>['kind'], status: Insert<typeof reviews>['status'], daysAgo: number) => ({
    id,
    clientId,
    projectId,
    title,
    kind,
    status,
    summary: `${title}.`,
    fileIds: [],
    reviewerKind: status === 'draft' ? null : 'operator',
    reviewerId: status === 'draft' ? null : ID.staff,
    reviewerName: status === 'draft' ? null : 'Oscar Operator',
    releasedAt: status === 'released' ? at(daysAgo - 1) : null,
    releasedByKind: status === 'released' ? 'operator' : null,
    releasedById: status === 'released' ? ID.admin : null,
    releasedByName: status === 'released' ? 'Adam Admin' : null,
    createdAt: at(daysAgo),
    updatedAt: at(status === 'released' ? daysAgo - 1 : daysAgo),
  });
  await tx
    .insert(reviews)
    .values([
      review('rev_demo_acme_plan', ID.clientAcme, 'prj_demo_acme_portal', 'Plan comparison report', 'report', 'released', 15),
      review('rev_demo_acme_design', ID.clientAcme, 'prj_demo_acme_portal', 'Portal design mock-ups', 'design', 'ready', 6),
      review('rev_demo_acme_guide', ID.clientAcme, 'prj_demo_acme_enrollment', 'Enrollment guide draft', 'document', 'draft', 2),
      review('rev_demo_globex_deck', ID.clientGlobex, 'prj_demo_globex_launch', 'Launch deck', 'deliverable', 'released', 12),
      review('rev_demo_globex_faq', ID.clientGlobex, 'prj_demo_globex_launch', 'Member FAQ', 'document', 'ready', 4),
      review('rev_demo_globex_notes', ID.clientGlobex, null, 'Carrier notes', 'report', 'draft', 1),
    ])
    .onConflictDoNothing({ target: reviews.id });

  const account = (id: string, clientId: string | null, name: string, domain: string, industry: string, status: Insert<typeof accounts>['status'], daysAgo: number) => ({
    id,
    clientId,
    name,
    domain,
    industry,
    status,
    ownerId: ID.staff,
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
  });
  await tx
    .insert(accounts)
    .values([
      account('acc_demo_acme_brokers', ID.clientAcme, 'Acme Broker Network', 'brokers.acme.example', 'Insurance', 'customer', 50),
      account('acc_demo_acme_plants', ID.clientAcme, 'Acme Plant Services', 'plants.acme.example', 'Manufacturing', 'prospect', 25),
      account('acc_demo_globex_clinics', ID.clientGlobex, 'Globex Clinics', 'clinics.globex.example', 'Healthcare', 'prospect', 30),
      account('acc_demo_platform_umbrella', null, 'Umbrella Logistics', 'umbrella.example', 'Logistics', 'prospect', 20),
      account('acc_demo_platform_hooli', null, 'Hooli Systems', 'hooli.example', 'Software', 'former_customer', 80),
    ])
    .onConflictDoNothing({ target: accounts.id });

  const contactRows = SEEDED_CONTACTS.map((c) => ({
    id: c.id,
    clientId: c.clientId,
    accountId: c.accountId,
    name: c.name,
    email: c.email,
    phone: c.phone,
    phoneDigits: c.phone.replace(/\D/g, ''),
    jobTitle: c.jobTitle,
    createdAt: at(c.daysAgo),
    updatedAt: at(c.daysAgo),
  }));
  await tx.insert(contacts).values(contactRows).onConflictDoNothing({ target: contacts.id });

  const lead = (
    id: string,
    clientId: string | null,
    title: string,
    company: string,
    status: Insert<typeof leads>['status'],
    accountId: string | null,
    contactId: string | null,
    daysAgo: number,
  ): Insert<typeof leads> => ({
    id,
    clientId,
    title,
    company,
    source: 'referral',
    status,
    accountId,
    contactId,
    ownerId: ID.staff,
    estimatedValue: 25000,
    currency: 'USD',
    notes: '',
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
  });
  await tx
    .insert(leads)
    .values([
      lead('led_demo_acme_new', ID.clientAcme, 'Broker portal add-on', 'Acme Broker Network', 'new', 'acc_demo_acme_brokers', 'con_demo_acme_priya', 3),
      lead('led_demo_acme_contacted', ID.clientAcme, 'Plant wellness programme', 'Acme Plant Services', 'contacted', 'acc_demo_acme_plants', 'con_demo_acme_marco', 9),
      lead('led_demo_acme_qualified', ID.clientAcme, 'Retiree benefits', 'Acme Broker Network', 'qualified', 'acc_demo_acme_brokers', null, 14),
      lead('led_demo_acme_disqualified', ID.clientAcme, 'Fleet insurance', 'Acme Plant Services', 'disqualified', null, null, 40),
      lead('led_demo_acme_converted', ID.clientAcme, 'Dental rider', 'Acme Broker Network', 'converted', 'acc_demo_acme_brokers', null, 60),
      lead('led_demo_globex_new', ID.clientGlobex, 'Clinic staff benefits', 'Globex Clinics', 'new', 'acc_demo_globex_clinics', 'con_demo_globex_lena', 2),
      lead('led_demo_platform_new', null, '2027 benefits renewal', 'Umbrella Logistics', 'new', 'acc_demo_platform_umbrella', 'con_demo_platform_tom', 1),
    ])
    .onConflictDoNothing({ target: leads.id });

  const opportunity = (id: string, clientId: string | null, accountId: string, leadId: string | null, name: string, stage: Insert<typeof opportunities>['stage'], daysAgo: number) => ({
    id,
    clientId,
    accountId,
    leadId,
    name,
    stage,
    amount: 48000,
    currency: 'USD',
    closeDate: new Date(now.getTime() + 30 * 86_400_000).toISOString().slice(0, 10),
    ownerId: ID.staff,
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
  });
  await tx
    .insert(opportunities)
    .values([
      opportunity('opp_demo_acme_retiree', ID.clientAcme, 'acc_demo_acme_brokers', 'led_demo_acme_qualified', 'Retiree benefits', 'proposal', 10),
      opportunity('opp_demo_acme_fleet', ID.clientAcme, 'acc_demo_acme_plants', null, 'Fleet insurance', 'lost', 35),
      opportunity('opp_demo_globex_clinics', ID.clientGlobex, 'acc_demo_globex_clinics', null, 'Clinic staff benefits', 'qualification', 2),
      opportunity('opp_demo_platform_umbrella', null, 'acc_demo_platform_umbrella', 'led_demo_platform_new', 'Umbrella Logistics onboarding', 'negotiation', 1),
    ])
    .onConflictDoNothing({ target: opportunities.id });

  await tx
    .insert(touchpoints)
    .values({
      id: 'tch_demo_acme_call',
      clientId: ID.clientAcme,
      leadId: 'led_demo_acme_contacted',
      contactId: 'con_demo_acme_marco',
      accountId: 'acc_demo_acme_plants',
      opportunityId: null,
      channel: 'call',
      direction: 'outbound',
      summary: 'Intro call about the wellness programme.',
      occurredAt: at(8),
      loggedByKind: 'operator',
      loggedById: ID.staff,
      loggedByName: 'Oscar Operator',
      createdAt: at(8),
    })
    .onConflictDoNothing({ target: touchpoints.id });

  const campaign = (id: string, clientId: string, name: string, kind: Insert<typeof campaigns>['kind'], channel: string, daysAgo: number) => ({
    id,
    clientId,
    name,
    kind,
    channel,
    status: 'draft' as const,
    subject: name,
    body: `${name}: enrollment opens soon. Visit your benefits portal for details.`,
    enrollmentStart: new Date(now.getTime() + 20 * 86_400_000).toISOString().slice(0, 10),
    enrollmentEnd: new Date(now.getTime() + 50 * 86_400_000).toISOString().slice(0, 10),
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo),
  });
  await tx
    .insert(campaigns)
    .values([
      campaign('cmp_demo_acme_oe', ID.clientAcme, 'Open enrollment 2027', 'open_enrollment', 'email', 5),
      campaign('cmp_demo_acme_reminder', ID.clientAcme, 'Enrollment reminder', 'reminder', 'sms', 4),
      campaign('cmp_demo_globex_oe', ID.clientGlobex, 'Globex open enrollment', 'open_enrollment', 'email', 3),
    ])
    .onConflictDoNothing({ target: campaigns.id });
  await tx
    .insert(campaignRecipients)
    .values([
      { id: 'rcp_demo_acme_oe_1', campaignId: 'cmp_demo_acme_oe', name: 'Acme employee 1', address: 'employee1@acme.example' },
      { id: 'rcp_demo_acme_oe_2', campaignId: 'cmp_demo_acme_oe', name: 'Acme employee 2', address: 'employee2@acme.example' },
      { id: 'rcp_demo_acme_oe_3', campaignId: 'cmp_demo_acme_oe', name: 'Acme employee 3', address: 'employee3@acme.example' },
      { id: 'rcp_demo_acme_rem_1', campaignId: 'cmp_demo_acme_reminder', name: 'Acme employee 1', address: '+1 555 010 0001' },
      { id: 'rcp_demo_globex_oe_1', campaignId: 'cmp_demo_globex_oe', name: 'Globex employee 1', address: 'employee1@globex.example' },
      { id: 'rcp_demo_globex_oe_2', campaignId: 'cmp_demo_globex_oe', name: 'Globex employee 2', address: 'employee2@globex.example' },
    ])
    .onConflictDoNothing({ target: campaignRecipients.id });
}

/** Seeded contacts (personal data: name, email, phone). */
export const SEEDED_CONTACTS = [
  { id: 'con_demo_acme_priya', clientId: ID.clientAcme, accountId: 'acc_demo_acme_brokers', name: 'Priya Natarajan', email: 'Priya.Natarajan@brokers.acme.example', phone: '+1 (415) 555-0142', jobTitle: 'Benefits Director', daysAgo: 20 },
  { id: 'con_demo_acme_marco', clientId: ID.clientAcme, accountId: 'acc_demo_acme_plants', name: 'Marco Albertini', email: 'marco.albertini@plants.acme.example', phone: '+1 415 555 0199', jobTitle: 'HR Manager', daysAgo: 18 },
  { id: 'con_demo_globex_lena', clientId: ID.clientGlobex, accountId: 'acc_demo_globex_clinics', name: 'Lena Hoffmann', email: 'lena.hoffmann@clinics.globex.example', phone: '+49 30 5550 1234', jobTitle: 'Benefits Director', daysAgo: 15 },
  { id: 'con_demo_platform_tom', clientId: null, accountId: 'acc_demo_platform_umbrella', name: 'Tomasz Wieczorek', email: 'tomasz.wieczorek@umbrella.example', phone: '+48 22 555 0177', jobTitle: 'CFO', daysAgo: 10 },
  { id: 'con_demo_platform_ada', clientId: null, accountId: 'acc_demo_platform_hooli', name: 'Adaeze Okonkwo', email: 'adaeze.okonkwo@hooli.example', phone: '+1 650 555 0123', jobTitle: 'HR Manager', daysAgo: 70 },
] as const;

/** Every seeded personal value (name, e-mail, phone): none may reach a caller without pii:read. */
export const SEEDED_PERSONAL_DATA: string[] = SEEDED_CONTACTS.flatMap((c) => [c.name, c.email, c.phone]);
