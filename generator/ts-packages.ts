// TypeScript and openapi-typescript, loaded through require (their CommonJS builds). Imported as ES
// modules, Node first compiles typescript.js (9 MB) to learn its format and then scans it for its
// named exports: about 430 ms of Node 20's start of every compile that prints types, before the first
// type is printed (644 ms against 215 ms to load it). require does neither. Every module of the
// compiler takes them from here, so a process holds one copy of each.
import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';
import type * as OpenapiTypescript from 'openapi-typescript';

const require = createRequire(import.meta.url);

export const ts = require('typescript') as typeof TypeScript;
export const openapiTs = require('openapi-typescript') as typeof OpenapiTypescript;
