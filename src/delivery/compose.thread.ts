/**
 * Worker-thread entry (started from handoff-threads.ts): builds messages'
 * bytes (MIME, attachments fetched) for the relay threads. Stateless: any
 * compose thread takes any message.
 */
import { workerData } from 'node:worker_threads';
import { createComposer, detachable, type ComposeJob, type ComposeOutcome, type HandoffSettings } from './handoff.js';
import { serveTasks } from '../runtime/index.js';

const composer = createComposer((workerData as { settings: HandoffSettings }).settings);

serveTasks<ComposeJob, ComposeOutcome>(async (job) => {
  const outcome = await composer.compose(job);
  return outcome.built ? { ...outcome, raw: detachable(outcome.raw) } : outcome;
});
