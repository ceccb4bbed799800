// The baseline of the HTTP bench: a bare Hono app on @hono/node-server, in its own process, answering
// GET /v1/meta with the body svc answers (BODY) and nothing else. Plain JavaScript: no loader.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const body = process.env.BODY ?? '{}';
const app = new Hono();
app.get('/v1/meta', (c) => c.body(body, 200, { 'Content-Type': 'application/json' }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => process.exit(0));
