// Every operation's handler, one family per file. The generated AllHandlers type makes a missing
// operation a type error; operations nobody has written yet are notImplemented placeholders
// (see runtime/pipeline/not-implemented.ts; `svc lint` lists them).
import type { AllHandlers } from '../generated/handlers/index.ts';
import type { Registry } from '../runtime/app.ts';
import { pipelineDefinitions } from './pipelines.ts';
import { INTAKE_TEMPLATES, type IntakeTemplates } from './intake-templates.ts';
import { campaignOutbox, campaignSubject } from './campaigns.ts';
import { opportunitySubject } from './crm.ts';
import { intakeSubject } from './intake.ts';
import { projectSubject } from './projects.ts';
import { reviewSubject } from './reviews.ts';
import { extractionJob } from './workers/extractions.ts';
import { pipelineRunWorker, type PipelineDefinition } from './workers/pipeline-runs.ts';
import { actionsHandlers } from './actions.ts';
import { approvalsHandlers } from './approvals.ts';
import { campaignsHandlers } from './campaigns.ts';
import { clientsHandlers } from './clients.ts';
import { crmHandlers } from './crm.ts';
import { eventsHandlers } from './events.ts';
import { executionHandlers } from './execution.ts';
import { extractionHandlers } from './extraction.ts';
import { filesHandlers } from './files.ts';
import { intakeHandlers } from './intake.ts';
import { keysHandlers } from './keys.ts';
import { membershipsHandlers } from './memberships.ts';
import { metaHandlers } from './meta.ts';
import { notificationsHandlers } from './notifications.ts';
import { oauthGrantsHandlers } from './oauth_grants.ts';
import { operationsHandlers } from './operations.ts';
import { pipelineHandlers } from './pipeline.ts';
import { projectsHandlers } from './projects.ts';
import { reviewsHandlers } from './reviews.ts';
import { searchHandlers } from './search.ts';
import { tasksHandlers } from './tasks.ts';
import { timelineHandlers } from './timeline.ts';
import { webhooksHandlers } from './webhooks.ts';

export const handlers: AllHandlers = {
  ...actionsHandlers,
  ...approvalsHandlers,
  ...campaignsHandlers,
  ...clientsHandlers,
  ...crmHandlers,
  ...eventsHandlers,
  ...executionHandlers,
  ...extractionHandlers,
  ...filesHandlers,
  ...intakeHandlers,
  ...keysHandlers,
  ...membershipsHandlers,
  ...metaHandlers,
  ...notificationsHandlers,
  ...oauthGrantsHandlers,
  ...operationsHandlers,
  ...pipelineHandlers,
  ...projectsHandlers,
  ...reviewsHandlers,
  ...searchHandlers,
  ...tasksHandlers,
  ...timelineHandlers,
  ...webhooksHandlers,
};

/**
 * Registry fields beyond the contract's (generated/wiring.ts spreads them in): the domain's background
 * workers (the pipeline runner), file jobs (extractions), the outbox's campaign hooks, the loaders of
 * its approval subjects (the contract's `subject: { resource }` types; the runtime loads `client`), and, for the demo
 * workspace (bin/wiring.ts PlatformRegistry), the pipelines the worker executes and the intake templates.
 */
export const registryExtras = {
  workers: [pipelineRunWorker(pipelineDefinitions)],
  fileJobs: [extractionJob],
  outbox: campaignOutbox,
  approvalSubjects: { project: projectSubject, intake: intakeSubject, opportunity: opportunitySubject, review: reviewSubject, campaign: campaignSubject },
  pipelines: pipelineDefinitions,
  intakeTemplates: INTAKE_TEMPLATES,
} satisfies Partial<Registry> & { pipelines: readonly PipelineDefinition[]; intakeTemplates: IntakeTemplates };
