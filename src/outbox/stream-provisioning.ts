/**
 * The stream the mirror publishes to: created when absent, checked when
 * present. A stream that cannot hold our events as promised (other subjects,
 * memory storage, a duplicate window too short to absorb a republish) is a
 * conflict: the daemon refuses it rather than publish into it.
 */
import { nanos } from '@nats-io/nats-core';
import { RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { isStreamNotFound } from '../nats/index.js';

export interface StreamSettings {
  name: string;
  subjectPrefix: string;
  /** 0: no limit. */
  maxAgeMs: number;
  /** 0: no limit. */
  maxBytes: number;
  replicas: number;
  duplicateWindowMs: number;
}

/** The stream conflicts with what the mirror needs; the message says how to resolve it. */
export class StreamConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamConflict';
  }
}

/** Whether `subjects` (stream filters) capture every subject under `prefix`. */
function covers(subjects: readonly string[], prefix: string): boolean {
  const tokens = prefix.split('.');
  return subjects.some((filter) => {
    const parts = filter.split('.');
    for (let index = 0; index < parts.length; index += 1) {
      if (parts[index] === '>') return true;
      if (index >= tokens.length) return false;
      if (parts[index] !== '*' && parts[index] !== tokens[index]) return false;
    }
    return false;
  });
}

/** What the existing stream's config gets wrong, in words; empty when it will do. */
export function streamProblems(config: Partial<StreamConfig>, wanted: StreamSettings): string[] {
  const problems: string[] = [];
  if (!covers(config.subjects ?? [], wanted.subjectPrefix)) {
    problems.push(`its subjects ${JSON.stringify(config.subjects ?? [])} do not include "${wanted.subjectPrefix}.>"`);
  }
  if (config.storage !== StorageType.File) problems.push(`its storage is ${String(config.storage)}, not file`);
  if (config.retention !== undefined && config.retention !== RetentionPolicy.Limits) {
    problems.push(`its retention is ${String(config.retention)}: a consumer could remove events others have not read`);
  }
  const window = (config.duplicate_window ?? 0) / 1e6;
  if (window < wanted.duplicateWindowMs)
    problems.push(
      `its duplicate_window is ${window / 1000} s, less than the ${wanted.duplicateWindowMs / 1000} s a republish after a crash needs`,
    );
  return problems;
}

/** Creates the stream or checks it; answers whether it was created. Throws StreamConflict. */
export async function provisionStream(jsm: JetStreamManager, wanted: StreamSettings): Promise<'created' | 'verified'> {
  try {
    const info = await jsm.streams.info(wanted.name);
    const problems = streamProblems(info.config, wanted);
    if (problems.length > 0) {
      throw new StreamConflict(
        `stream ${wanted.name} cannot hold the mirror: ${problems.join('; ')}. Fix or remove the stream, or set nats.stream to another name.`,
      );
    }
    return 'verified';
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  await jsm.streams.add({
    name: wanted.name,
    subjects: [`${wanted.subjectPrefix}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    duplicate_window: nanos(wanted.duplicateWindowMs),
    max_age: nanos(wanted.maxAgeMs),
    max_bytes: wanted.maxBytes === 0 ? -1 : wanted.maxBytes,
    num_replicas: wanted.replicas,
  });
  return 'created';
}
