// The route table: custom-method paths map to Hono router paths, static routes first.
import { describe, expect, it } from 'vitest';
import { routeTable } from '../../generator/emit/routes.ts';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { CONTRACT_DIR, SPEC_TOTALS, SPEC_TOTALS_REASON } from './helpers.ts';

describe('route table', () => {
  const routes = routeTable(buildModel(loadContract(CONTRACT_DIR)));
  const byId = new Map(routes.map((r) => [r.id, r]));

  it('maps literal colons to verb segments', () => {
    expect(byId.get('tasks.batch_create')).toMatchObject({ method: 'POST', path: '/v1/tasks:batch', routerPath: '/v1/tasks/~batch' });
    expect(byId.get('tasks.complete')).toMatchObject({
      method: 'POST',
      path: '/v1/tasks/{task_id}:complete',
      routerPath: '/v1/tasks/:task_id/~complete',
    });
  });

  it('puts static routes before parametrised ones that could match', () => {
    const index = (routerPath: string) => routes.findIndex((r) => r.routerPath === routerPath);
    expect(index('/v1/tasks/~batch')).toBeGreaterThanOrEqual(0);
    expect(index('/v1/tasks/~batch')).toBeLessThan(index('/v1/tasks/:task_id'));
    for (let i = 0; i < routes.length; i++)
      for (let j = i + 1; j < routes.length; j++) {
        const a = routes[i].routerPath.split('/');
        const b = routes[j].routerPath.split('/');
        if (a.length !== b.length) continue;
        // If b is static where a is a parameter with all earlier segments equal, b came too late.
        const k = a.findIndex((s, n) => s !== b[n]);
        if (k >= 0) expect(a[k].startsWith(':') && !b[k].startsWith(':'), `${routes[i].routerPath} before ${routes[j].routerPath}`).toBe(false);
      }
  });

  it('has one row per operation', () => {
    expect(routes, SPEC_TOTALS_REASON).toHaveLength(SPEC_TOTALS.operations);
  });
});
