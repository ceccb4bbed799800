// TEMPORARY placeholder written by the backend (handlers) engineer so handlers/index.ts compiles.
// The pipeline engineer owns this file and replaces it; keep the export name `approvalsHandlers`.
import { notImplemented } from '../runtime/not-implemented.ts';

export const approvalsHandlers = {
  'approvals.list': notImplemented('approvals.list'),
  'approvals.get': notImplemented('approvals.get'),
  'approvals.approve': notImplemented('approvals.approve'),
  'approvals.reject': notImplemented('approvals.reject'),
};
