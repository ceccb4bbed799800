// runtime/ knows no contract (issue 42, "svc serves any contract"): it imports nothing from
// generated/ (test/contract/layout.test.ts fails on any import of it, or of handlers/, bin/, demo/).
// Every contract fact reaches it in the registry bin/wiring.ts builds (runtime/app.ts Registry),
// installed at start for its leaf functions (runtime/contract-facts.ts); the Platform API's typed
// forms stay in generated/ and handlers/. The unions and shapes the runtime owns (its tables' status
// columns, the feed's event, a notification, a decision) must stay the contract's: checked by tsc here.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as contract from '../../generated/contract.ts';
import type { components } from '../../generated/types.ts';
import type * as tables from '../../runtime/data/schema.ts';
import type * as domain from '../../handlers/data/schema.ts';
import type { FeedEvent } from '../../runtime/events/feed.ts';
import type { Notification } from '../../runtime/events/notifications.ts';
import type { ApprovalDecision } from '../../runtime/pipeline/approvals.ts';
import { ID_PREFIXES } from '../../runtime/data/ids.ts';
import { DOMAIN_ID_PREFIXES, newDomainId } from '../../handlers/data/ids.ts';

describe('runtime/ knows no contract', () => {
  it("the runtime's own unions and shapes are the contract's (checked by tsc)", () => {
    expectTypeOf<tables.ApiKeyMode>().toEqualTypeOf<contract.ApiKeyMode>();
    expectTypeOf<tables.ApprovalStatus>().toEqualTypeOf<contract.ApprovalStatus>();
    expectTypeOf<tables.MembershipStatus>().toEqualTypeOf<contract.MembershipStatus>();
    expectTypeOf<tables.OperationStatus>().toEqualTypeOf<contract.OperationStatus>();
    expectTypeOf<domain.PipelineRunStatus>().toEqualTypeOf<contract.PipelineRunStatus>();
    expectTypeOf<domain.PipelineStepStatus>().toEqualTypeOf<contract.PipelineStepStatus>();
    expectTypeOf<domain.PipelineEventType>().toEqualTypeOf<components['schemas']['PipelineEvent']['type']>();
    expectTypeOf<domain.PipelineLevel>().toEqualTypeOf<components['schemas']['PipelineEvent']['level']>();
    expectTypeOf<tables.WebhookDeliveryStatus>().toEqualTypeOf<contract.WebhookDeliveryStatus>();
    expectTypeOf<tables.WebhookEndpointStatus>().toEqualTypeOf<contract.WebhookEndpointStatus>();
    expectTypeOf<tables.FileStatus>().toEqualTypeOf<contract.FileStatus>();
    expectTypeOf<domain.ExtractionStatus>().toEqualTypeOf<contract.ExtractionStatus>();
    expectTypeOf<components['schemas']['Event']>().toMatchTypeOf<FeedEvent>();
    expectTypeOf<components['schemas']['Notification']>().toMatchTypeOf<Notification>();
    expectTypeOf<components['schemas']['ApprovalDecision']>().toEqualTypeOf<ApprovalDecision>();
  });

  it("the runtime's id kinds are the machinery's; the Platform API's ids keep their prefixes", () => {
    for (const kind of ['project', 'task', 'comment', 'intake', 'extraction']) expect(ID_PREFIXES).not.toHaveProperty(kind);
    expect(DOMAIN_ID_PREFIXES).toEqual({ project: 'prj', task: 'tsk', comment: 'cmt', intake: 'int', extraction: 'ext' });
    for (const [kind, prefix] of Object.entries(DOMAIN_ID_PREFIXES)) {
      expect(newDomainId(kind as keyof typeof DOMAIN_ID_PREFIXES)).toMatch(new RegExp(`^${prefix}_[0-9a-z]{20}$`));
    }
  });
});
