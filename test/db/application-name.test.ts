// The application_name of svc's connections (runtime/data/application-name.ts): `svc:<role>:<host>:<pid>`,
// within PostgreSQL's 63 bytes, the host keeping its end and only characters PostgreSQL prints as they are.
// That PostgreSQL and PgBouncer show it: test/observability/horizon.test.ts and test/fleet/pooler.test.ts.
import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { applicationName, named } from '../../runtime/data/application-name.ts';

describe('applicationName', () => {
  it('names the role, the host and the pid', () => {
    expect(applicationName('requests', 'web-1.example', 4242)).toBe('svc:requests:web-1.example:4242');
    expect(applicationName('workers')).toBe(applicationName('workers', hostname(), process.pid));
    expect(named('listener')).toEqual({ connection: { application_name: applicationName('listener') } });
  });

  it('keeps within 63 bytes, cutting the host from its start (a pod name differs at its end)', () => {
    const pod = `svc-deployment-with-a-very-long-name-${'x'.repeat(40)}-7c9f8d6b5-q2w4e`;
    const name = applicationName('listener', pod, 4194304);
    expect(Buffer.byteLength(name)).toBe(63);
    expect(name.startsWith('svc:listener:')).toBe(true);
    expect(name.endsWith('-7c9f8d6b5-q2w4e:4194304')).toBe(true);
  });

  it('replaces what PostgreSQL would print as ? and names an empty host', () => {
    expect(applicationName('migrate', 'hôte_1 (prod)', 7)).toBe('svc:migrate:h-te-1--prod-:7');
    expect(applicationName('seed', '', 7)).toBe('svc:seed:unknown:7');
  });
});
