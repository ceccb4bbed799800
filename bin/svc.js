#!/usr/bin/env node
// The svc CLI. TypeScript sources run through tsx's loader; no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
