// The `fleet` scenario: intake, relay rate and node CPU per message of one, two and three fleet
// nodes on this machine, against one daemon without fleet mode, the cost of the fleet-wide
// limits, and what a node spends on the mail of the others (bench/fleet-round.mjs runs each).
//
// Each configuration gets a fresh three-server NATS cluster (test/peers/nats-cluster.mjs, the
// tests' own) so that no configuration, membership or limit counter of an earlier one is in its
// buckets. The nodes and the cluster's servers share the machine's cores, so a rate alone cannot
// show scaling: `node CPU µs/message` is the nodes' CPU from the first post to the last relay,
// summed over the nodes, per message of the whole fleet (intake and relay together).
//
// `posted/s per node` is each node's HTTP intake while the others post too (every new client id
// is claimed in the fleet's claim log before the commit); `posted/s, fleet` is all of it.
//
// `fleet limits`: the account carries limit_per_minute/hour/day far above what is sent, so that
// every send goes through the fleet's budget leases without ever waiting for one.
//
// `model`: three nodes with limits, two posting and one idle. The idle node's CPU beyond its own
// idle rate, per message of the fleet, is what a node spends on each message of the others (the
// claim log it indexes, the limits it watches); the posting nodes' CPU beyond their idle rate,
// less that for each other's messages, is what a node spends on each message of its own.
import { fleetRound } from './fleet-round.mjs';

const HIGH_LIMIT = 10_000_000;
const LIMITS = { limit_per_minute: HIGH_LIMIT, limit_per_hour: HIGH_LIMIT, limit_per_day: HIGH_LIMIT };
/** The model's idle rates are read over this long, before and after the load: an idle node's CPU is a few 10 ms ticks a second. */
const MODEL_IDLE_MS = 3000;
/** Longer than the other rounds: the idle node's share of each message is small against its idle rate. */
const MODEL_POST_SECONDS = 4;
/** The fleet size the model's share is given for. */
const MODEL_NODES = 10;

const sum = (values) => values.reduce((total, value) => total + value, 0);
/** The nodes' CPU over the window per message of the fleet, in µs. */
const cpuPerMessage = (round, which = 'windowMs') => (sum(round[which]) * 1000) / Math.max(1, round.total);

/**
 * Per-message CPU from the round with an idle node: `own` for each message a node took itself,
 * `other` for each message another node took; each net of the node's CPU with no mail.
 */
function scalingModel(round) {
  const net = round.windowMs.map((ms, index) => ms - round.idleMsPerS[index] * round.windowSeconds);
  const posting = round.queued.map((count) => count > 0);
  const idle = net.filter((_, index) => !posting[index]);
  const other = (sum(idle) * 1000) / idle.length / round.total;
  const postingNet = sum(net.filter((_, index) => posting[index]));
  const othersMessages = sum(round.queued.filter((count) => count > 0).map((count) => round.total - count));
  const own = (postingNet * 1000 - other * othersMessages) / round.total;
  const othersShare = ((MODEL_NODES - 1) * other) / (own + (MODEL_NODES - 1) * other);
  return { own, other, othersShare };
}

export async function fleetScenario() {
  const alone = await fleetRound(0);
  const mirrored = await fleetRound(0, { mirror: true });
  const one = await fleetRound(1);
  const two = await fleetRound(2);
  const three = await fleetRound(3);
  const limited = await fleetRound(3, { account: LIMITS });
  const spread = await fleetRound(3, {
    account: LIMITS,
    posting: 2,
    idleMs: MODEL_IDLE_MS,
    postSeconds: MODEL_POST_SECONDS,
  });
  const model = scalingModel(spread);
  const rounds = [alone, mirrored, one, two, three, limited, spread];
  return {
    'posted/s per node, no fleet': alone.postedPerNode,
    'posted/s per node, no fleet, R3 mirror': mirrored.postedPerNode,
    'posted/s per node, 1 node': one.postedPerNode,
    'posted/s per node, 2 nodes': two.postedPerNode,
    'posted/s per node, 3 nodes': three.postedPerNode,
    'posted/s, fleet of 2': two.postedFleet,
    'posted/s, fleet of 3': three.postedFleet,
    'relayed/s, no fleet': alone.relayed,
    'relayed/s, no fleet, R3 mirror': mirrored.relayed,
    'relayed/s, 1 node': one.relayed,
    'relayed/s, 2 nodes': two.relayed,
    'relayed/s, 3 nodes': three.relayed,
    'relayed/s, 3 nodes, fleet limits': limited.relayed,
    'node CPU µs/message, no fleet': cpuPerMessage(alone),
    'node CPU µs/message, no fleet, R3 mirror': cpuPerMessage(mirrored),
    'node CPU µs/message, 1 node': cpuPerMessage(one),
    'node CPU µs/message, 2 nodes': cpuPerMessage(two),
    'node CPU µs/message, 3 nodes': cpuPerMessage(three),
    '  of which intake, 3 nodes': cpuPerMessage(three, 'intakeMs'),
    'node CPU µs/message, 3 nodes, fleet limits': cpuPerMessage(limited),
    'fleet limits: added CPU µs/message': cpuPerMessage(limited) - cpuPerMessage(three),
    'nats servers CPU µs/message, 1 node': (one.natsMs * 1000) / one.total,
    'nats servers CPU µs/message, 3 nodes': (three.natsMs * 1000) / three.total,
    'model: node CPU µs per own message': model.own,
    "model: node CPU µs per other node's message": model.other,
    [`model: % of a node for others' mail, ${MODEL_NODES} nodes`]: model.othersShare * 100,
    'node idle CPU ms/s, 3 nodes': sum(three.idleMsPerS) / three.idleMsPerS.length,
    'model: idle node CPU ms/s, no mail': spread.idleMsPerS[2],
    'model: idle node CPU ms/s during the load': spread.windowMs[2] / spread.windowSeconds,
    'configuration on every node, s, 3 nodes': three.configSeconds,
    messages: sum(rounds.map((round) => round.total)),
    // Every round has passed its direct count (fleet-round.mjs fails it otherwise): no message lost or sent twice.
    'all relayed, counted': 1,
  };
}
