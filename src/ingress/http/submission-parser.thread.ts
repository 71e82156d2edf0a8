/**
 * Worker-thread entry (started from parser-threads.ts): parses /add-messages
 * bodies with ingress's pure parser, the limits given as workerData, and seals
 * each message's payload, and its envelope and subject with their search terms,
 * here rather than on the main thread (submission-parser.ts sealPayloads).
 */
import { workerData } from 'node:worker_threads';
import { parseSubmission, sealPayloads, type ParseOutcome } from './submission-parser.js';
import type { ParserThreadData, ParserTask } from './parser-threads.js';
import { serveTasks } from '../../runtime/index.js';
import { sealingKeys } from '../../security/index.js';

const { limits, bodyKeys, blindKey } = workerData as ParserThreadData;
const keys = sealingKeys({ bodyKeys, blindKey });
serveTasks<ParserTask, ParseOutcome>((task) =>
  sealPayloads(parseSubmission(new Uint8Array(task.body), limits), keys, task.tenant),
);
