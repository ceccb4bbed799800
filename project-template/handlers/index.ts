// Every operation's handler, one family per file; `svc generate` adds a family's file and its line
// here when the contract gains one. generated/wiring.ts imports this module: `handlers`, and the
// optional `registryExtras` (registry fields beyond the contract's, e.g. pipelines).
import type { AllHandlers } from '../generated/handlers/index.ts';
import { notesHandlers } from './notes.ts';

export const handlers: AllHandlers = {
  ...notesHandlers,
};
