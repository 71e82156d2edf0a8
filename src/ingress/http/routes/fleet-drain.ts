/**
 * Drain and leave (admin, fleet mode): POST /fleet/drain starts moving this
 * node's waiting mail to the others and refuses intake from then on; GET
 * /fleet/drain follows it. A single node has nobody to hand mail to: both
 * answer CONFLICT there.
 */
import { Hono } from 'hono';
import { AppError } from '../../../core/index.js';
import type { DrainProgress } from '../../../core/fleet/index.js';
import { requireAdmin } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { json, on, type RouteDoc } from '../route-doc.js';

export interface FleetDrainControl {
  phase(): 'active' | 'draining' | 'drained';
  progress(): DrainProgress & { running: boolean };
  /** Starts a drain (or another pass of one); does not wait for it. */
  drain(): void;
}

const ANSWER =
  '`{"drain":{"phase":"active|draining|drained","running","moved":{node:count},"waiting","last_error"}}`: `drained` once nothing waits here (the node may be stopped)';

export const FLEET_DRAIN_ROUTES = {
  start: {
    method: 'post',
    path: '/fleet/drain',
    tag: 'Operations',
    summary:
      "Drain this node: refuse intake (503 NODE_DRAINING), finish the sends in flight, move the waiting mail to the fleet's live nodes",
    description:
      'Answers at once (202) with the progress; GET /fleet/drain follows it. Posting again runs another pass over what is left.',
    access: 'admin',
    responses: { 202: json(ANSWER) },
    errors: ['CONFLICT'],
  },
  status: {
    method: 'get',
    path: '/fleet/drain',
    tag: 'Operations',
    summary: "This node's drain: its phase, the messages moved to each node, those still waiting",
    access: 'admin',
    responses: { 200: json(ANSWER) },
    errors: ['CONFLICT'],
  },
} as const satisfies Record<string, RouteDoc>;

export function fleetDrainRoutes(control: FleetDrainControl | null): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const fleetOnly = (): FleetDrainControl => {
    if (control === null)
      throw new AppError('CONFLICT', 'this node is not in a fleet: there is no other node to drain to');
    return control;
  };
  on(app, FLEET_DRAIN_ROUTES.start, (c) => {
    requireAdmin(c.get('principal'));
    const drain = fleetOnly();
    drain.drain();
    return c.json({ drain: drain.progress() }, 202);
  });
  on(app, FLEET_DRAIN_ROUTES.status, (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ drain: fleetOnly().progress() });
  });
  return app;
}
