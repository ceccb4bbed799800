// clients, reviews, hub, CRM and campaign rows -> the contract's resources.
// Contacts are never mapped here: every contact leaving the service goes through toContact below,
// which takes the caller's Policy and applies its one redaction function (Policy.redactPersonalData).
import type { components } from '../../generated/types.ts';
import type { PrincipalKind } from '../../runtime/contract-types.ts';
import type { clients } from '../../runtime/data/schema.ts';
import type { accounts, campaigns, contacts, hubPublications, leads, opportunities, reviews, touchpoints } from '../data/schema.ts';
import type { Policy } from '../../runtime/auth/policy.ts';
import { iso } from './time.ts';

type Schemas = components['schemas'];
export type Client = Schemas['Client'];
export type Review = Schemas['Review'];
export type HubPublication = Schemas['HubPublication'];
export type Account = Schemas['Account'];
export type Contact = Schemas['Contact'];
export type Lead = Schemas['Lead'];
export type Opportunity = Schemas['Opportunity'];
export type Touchpoint = Schemas['Touchpoint'];
export type Campaign = Schemas['Campaign'];
export type ActorRef = Schemas['ActorRef'];

export type ClientRow = typeof clients.$inferSelect;
export type ReviewRow = typeof reviews.$inferSelect;
export type HubPublicationRow = typeof hubPublications.$inferSelect;
export type AccountRow = typeof accounts.$inferSelect;
export type ContactRow = typeof contacts.$inferSelect;
export type LeadRow = typeof leads.$inferSelect;
export type OpportunityRow = typeof opportunities.$inferSelect;
export type TouchpointRow = typeof touchpoints.$inferSelect;
export type CampaignRow = typeof campaigns.$inferSelect;

function actor(kind: string | null, id: string | null, name: string | null): ActorRef | null {
  if (kind === null || id === null) return null;
  return { kind: kind as PrincipalKind, id, name };
}

export function toClient(row: ClientRow): Client {
  return {
    id: row.id,
    name: row.name,
    status: row.status as Client['status'],
    industry: row.industry,
    primaryContactName: row.primaryContactName,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toReview(row: ReviewRow): Review {
  return {
    id: row.id,
    clientId: row.clientId,
    projectId: row.projectId,
    title: row.title,
    kind: row.kind as Review['kind'],
    status: row.status as Review['status'],
    summary: row.summary,
    fileIds: [...row.fileIds],
    reviewer: actor(row.reviewerKind, row.reviewerId, row.reviewerName),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    releasedAt: iso(row.releasedAt),
    releasedBy: actor(row.releasedByKind, row.releasedById, row.releasedByName),
  };
}

export function toHubPublication(row: HubPublicationRow): HubPublication {
  return {
    clientId: row.clientId,
    version: row.version,
    url: row.url,
    publishedAt: iso(row.publishedAt),
    publishedBy: actor(row.publishedByKind, row.publishedById, row.publishedByName)!,
  };
}

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    domain: row.domain,
    industry: row.industry,
    status: row.status as Account['status'],
    ownerId: row.ownerId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The only way a contact leaves the service: mapped, then redacted by the caller's policy. */
export function toContact(row: ContactRow, policy: Policy): Contact {
  const contact = policy.redactPersonalData({
    id: row.id,
    clientId: row.clientId,
    accountId: row.accountId,
    name: row.name,
    email: row.email,
    phone: row.phone,
    jobTitle: row.jobTitle,
    redacted: false,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  });
  // Fixed member order and nothing else (the redaction spreads the input).
  return {
    id: contact.id as string,
    clientId: contact.clientId as string | null,
    accountId: contact.accountId as string | null,
    name: contact.name,
    email: contact.email,
    phone: contact.phone,
    jobTitle: contact.jobTitle as string | null,
    redacted: contact.redacted,
    createdAt: contact.createdAt as string,
    updatedAt: contact.updatedAt as string,
  };
}

export function toLead(row: LeadRow): Lead {
  return {
    id: row.id,
    clientId: row.clientId,
    title: row.title,
    company: row.company,
    source: row.source as Lead['source'],
    status: row.status as Lead['status'],
    accountId: row.accountId,
    contactId: row.contactId,
    ownerId: row.ownerId,
    estimatedValue: row.estimatedValue,
    currency: row.currency,
    notes: row.notes,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toOpportunity(row: OpportunityRow): Opportunity {
  return {
    id: row.id,
    clientId: row.clientId,
    accountId: row.accountId,
    leadId: row.leadId,
    name: row.name,
    stage: row.stage as Opportunity['stage'],
    amount: row.amount,
    currency: row.currency,
    closeDate: row.closeDate,
    ownerId: row.ownerId,
    convertedProjectId: row.convertedProjectId,
    convertedAt: iso(row.convertedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toTouchpoint(row: TouchpointRow): Touchpoint {
  return {
    id: row.id,
    clientId: row.clientId,
    leadId: row.leadId,
    contactId: row.contactId,
    accountId: row.accountId,
    opportunityId: row.opportunityId,
    channel: row.channel as Touchpoint['channel'],
    direction: row.direction as Touchpoint['direction'],
    summary: row.summary,
    occurredAt: iso(row.occurredAt),
    loggedBy: actor(row.loggedByKind, row.loggedById, row.loggedByName)!,
    createdAt: iso(row.createdAt),
  };
}

export function toCampaign(row: CampaignRow, audienceSize: number): Campaign {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    kind: row.kind as Campaign['kind'],
    channel: row.channel as Campaign['channel'],
    status: row.status as Campaign['status'],
    audienceSize,
    enrollmentStart: row.enrollmentStart,
    enrollmentEnd: row.enrollmentEnd,
    scheduledAt: iso(row.scheduledAt),
    sentAt: iso(row.sentAt),
    operationId: row.operationId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
