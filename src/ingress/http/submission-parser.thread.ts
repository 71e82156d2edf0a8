/**
 * Worker-thread entry (started from parser-threads.ts): parses /add-messages
 * bodies with ingress's pure parser, the limits given as workerData, and seals
 * each message's payload under a data key of its own here rather than on the
 * main thread (submission-parser.ts sealPayloads).
 */
import { workerData } from 'node:worker_threads';
import { parseSubmission, sealPayloads, type ParseOutcome } from './submission-parser.js';
import type { ParserThreadData, ParserTask } from './parser-threads.js';
import { serveTasks } from '../../runtime/index.js';
import { createBodySeal } from '../../security/index.js';

const { limits, bodyKeys } = workerData as ParserThreadData;
const seal = createBodySeal(bodyKeys);
serveTasks<ParserTask, ParseOutcome>((task) =>
  sealPayloads(parseSubmission(new Uint8Array(task.body), limits), seal, task.tenant),
);
