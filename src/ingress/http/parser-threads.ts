/**
 * Where /add-messages bodies are parsed: large bodies in parser threads
 * (transferred, not copied), small ones on the main thread, where they cost
 * less than the two thread hand-offs a worker round trip needs. With no
 * threads configured, all of them here.
 */
import type { Logger } from '../../core/index.js';
import type { SealingMaterial } from '../../security/index.js';
import { type Service, createWorkerPool, workerScript } from '../../runtime/index.js';
import {
  inlineSubmissionParser,
  unwrap,
  type ParseOutcome,
  type ParserLimits,
  type SubmissionParser,
} from './submission-parser.js';

/** What a parser thread is started with: the limits, and the keys that wrap the data keys it makes. */
export interface ParserThreadData extends SealingMaterial {
  limits: ParserLimits;
}

/** One body to parse, transferred, and the tenant of the key that sent it (null: the admin's). */
export interface ParserTask {
  body: ArrayBuffer;
  tenant: string | null;
}

/** Bodies up to this size (a few messages) are parsed on the main thread. */
const INLINE_PARSE_MAX_BYTES = 16 * 1024;

export interface SubmissionParsing {
  parse: SubmissionParser;
  /** Null without threads: always ready. */
  ready: (() => boolean) | null;
  /** The threads: closed after everything that could still parse. */
  service: Service;
}

export function createSubmissionParsing(
  limits: ParserLimits,
  threads: number,
  log: Logger,
  keys: Pick<ParserThreadData, 'bodyKeys' | 'blindKey'>,
): SubmissionParsing {
  const inline = inlineSubmissionParser(limits);
  if (threads === 0) return { parse: inline, ready: null, service: { name: 'parser-threads', stop: () => undefined } };
  const pool = createWorkerPool<ParserTask, ParseOutcome>({
    script: workerScript(new URL('./submission-parser.thread.js', import.meta.url)),
    size: threads,
    name: 'submission-parser',
    log,
    data: { limits, ...keys } satisfies ParserThreadData,
  });
  return {
    // A small body is parsed here and its payloads sealed by the store, as the thread's round trip would cost more.
    parse: async (body, tenantHint) =>
      body.byteLength <= INLINE_PARSE_MAX_BYTES
        ? inline(body)
        : unwrap(await pool.run({ body, tenant: tenantHint ?? null }, [body])),
    ready: () => pool.ready(),
    service: { name: 'parser-threads', stop: () => pool.close() },
  };
}
