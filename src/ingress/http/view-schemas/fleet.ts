/**
 * The fields fleet mode adds to the message routes' answers: which
 * node holds a message, the nodes that did not answer, and each node's outcome
 * of a command. Absent for a single node, whose answers are as they always were.
 */
import { z } from 'zod';
import { field } from './field.js';

export const nodeIdField = field(
  z.string(),
  'Fleet mode: the node that holds the message (absent for a single node).',
  'n2',
);

export const missingNodes = field(
  z.array(z.string()),
  'Fleet mode: nodes known to the fleet that did not answer in time or are not alive; their messages are not in this answer (absent for a single node).',
  ['n3'],
);

export const commandNodes = field(
  z.record(z.string(), z.record(z.string(), z.unknown())),
  "Fleet mode: each node's own answer to the command (the fields above, or `error` with `code` and `message`); absent for a single node.",
  {
    n1: { deleted: [], not_found: ['inv-2025-001'], in_flight: [] },
    n2: { deleted: ['inv-2025-001'], not_found: [], in_flight: [] },
  },
);

/** The fields a command's answer gains in fleet mode. */
export const fleetCommandFields = { nodes: commandNodes.optional(), missing_nodes: missingNodes.optional() };
