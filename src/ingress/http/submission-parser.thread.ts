/**
 * Worker-thread entry (started from parser-threads.ts): parses /add-messages
 * bodies with ingress's pure parser, the limits given as workerData.
 */
import { workerData } from 'node:worker_threads';
import { parseSubmission, type ParseOutcome, type ParserLimits } from './submission-parser.js';
import { serveTasks } from '../../runtime/index.js';

const limits = workerData as ParserLimits;
serveTasks<ArrayBuffer, ParseOutcome>((body) => parseSubmission(new Uint8Array(body), limits));
