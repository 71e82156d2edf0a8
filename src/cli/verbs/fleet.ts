/**
 * `mailproxy fleet status` and `fleet drain`: who is in the fleet, and moving a
 * node's waiting mail to the others before it leaves (POST /fleet/drain, then
 * GET /fleet/drain until it is drained or a pass leaves mail behind).
 */
import { integerOption } from '../args.js';
import { apiCall, type Command } from '../command.js';
import { cliError, failed, ok, report, type Result } from '../cli-error.js';
import { fields } from '../fields.js';
import type { ApiClient } from '../api-client.js';
import type { DrainAnswer, StatusAnswer } from '../answers.js';

const POLL_MS = 250;
const DEFAULT_TIMEOUT_SECONDS = 600;

function progress(body: DrainAnswer): string {
  const { drain } = body;
  const moved = Object.entries(drain.moved).map(([node, count]) => `${node} ${count}`);
  return fields([
    ['phase', drain.phase],
    ['moved', moved.length === 0 ? 'nothing' : moved.join(', ')],
    ['waiting here', drain.waiting],
    ['last error', drain.last_error],
  ]);
}

function fleetView(body: StatusAnswer): string {
  const fleet = body.fleet;
  if (fleet === undefined) return 'this node is not in a fleet\n';
  const nodes = fleet.nodes.map((node) => `${node.node_id} ${node.liveness}`);
  return fields([
    ['node', fleet.node_id],
    ['connected', fleet.connected ? 'yes' : 'no'],
    ['nodes', nodes.join(', ')],
    ['missing', fleet.missing.length === 0 ? 'none' : fleet.missing.join(', ')],
  ]);
}

/** Starts the drain, then follows it until nothing waits (ok) or a pass ended with mail left (failed). */
async function drainUntilDone(client: ApiClient, timeoutMs: number): Promise<Result<DrainAnswer>> {
  const started = await client.request<DrainAnswer>('POST', '/fleet/drain');
  if (!started.ok) return started;
  const deadline = Date.now() + timeoutMs;
  let last = started.value;
  for (;;) {
    const { drain } = last;
    if (drain.phase === 'drained') return ok(last);
    // A pass that ended with mail left (no live peer, peers refusing): the operator decides.
    if (!drain.running)
      return failed(
        cliError(
          'API_ERROR',
          `the drain left ${drain.waiting} messages on this node: ${drain.last_error ?? 'unknown reason'}; run it again`,
        ),
      );
    if (Date.now() > deadline)
      return failed(
        cliError('API_ERROR', `the drain did not finish within ${timeoutMs / 1000} s: ${drain.waiting} still waiting`),
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const next = await client.request<DrainAnswer>('GET', '/fleet/drain');
    if (!next.ok) return next;
    last = next.value;
  }
}

export const fleetCommand: Command = {
  name: 'fleet',
  summary: 'The fleet this node belongs to (fleet mode).',
  verbs: {
    status: {
      usage: '',
      summary: 'this node, the nodes it sees and their liveness, those missing (GET /status)',
      positionals: [0, 0],
      api: true,
      run: (input) => apiCall(input, (client) => client.request<StatusAnswer>('GET', '/status'), fleetView),
    },
    drain: {
      usage: '[--timeout SECONDS]',
      summary:
        'refuse intake, finish the sends in flight, move every waiting message to the live nodes; waits until drained',
      options: { timeout: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: (input) => {
        const timeout = integerOption(input.values, 'timeout', 1);
        if (!timeout.ok) return Promise.resolve(report(input.cli.stderr, timeout.error));
        return apiCall(
          input,
          (client) => drainUntilDone(client, (timeout.value ?? DEFAULT_TIMEOUT_SECONDS) * 1000),
          progress,
        );
      },
    },
  },
};
