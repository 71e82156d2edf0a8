/**
 * Worker-thread entry (started from handoff-threads.ts): builds messages'
 * bytes (MIME, attachments fetched) for the relay threads, opening their sealed
 * payloads. Stateless: any compose thread takes any message.
 */
import { workerData } from 'node:worker_threads';
import { createComposer, detachable, type ComposeJob, type ComposeOutcome } from './handoff.js';
import type { HandoffThreadData } from './handoff-threads.js';
import { serveTasks } from '../runtime/index.js';
import { createBodySeal } from '../security/index.js';

const { settings, bodyKeys } = workerData as HandoffThreadData;
const composer = createComposer(settings, createBodySeal(bodyKeys));

serveTasks<ComposeJob, ComposeOutcome>(async (job) => {
  const outcome = await composer.compose(job);
  // What a compose thread builds is always in clear (an SMTP submission is composed where it is sent).
  return outcome.built && 'clear' in outcome.body
    ? { ...outcome, body: { clear: detachable(outcome.body.clear) } }
    : outcome;
});
