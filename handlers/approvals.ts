// approvals.list / get / approve / reject. Owned by the runtime-pipeline engineer: the rules (people
// only, never the proposer, Tier 3 two distinct approvers, the write run as the proposer on the last
// approval, expiry, visibility) live in runtime/approvals.ts; these bodies only delegate.
import type { ApprovalsHandlers } from '../generated/handlers/approvals.ts';
import { approveApproval, getApproval, listApprovals, rejectApproval } from '../runtime/approvals.ts';

export const approvalsHandlers: ApprovalsHandlers = {
  'approvals.list': async (input, ctx) => (await listApprovals(input, ctx)) as never,
  'approvals.get': async (input, ctx) => (await getApproval(input, ctx)) as never,
  'approvals.approve': async (input, ctx) => (await approveApproval(input, ctx)) as never,
  'approvals.reject': async (input, ctx) => (await rejectApproval(input, ctx)) as never,
};
