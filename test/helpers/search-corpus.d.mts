/** Types of search-corpus.mjs (plain JavaScript, shared with bench/). */
export interface CorpusFields {
  id: string;
  to: string;
  from: string;
  subject: string;
  batch_code: string;
  priority: number;
}
export function corpusFields(index: number): CorpusFields;
export function corpusMessage(index: number, deferredTs?: number): Record<string, unknown>;
export function matches(count: number, predicate: (fields: CorpusFields, index: number) => boolean): number[];
export function postCorpus(options: {
  url: string;
  token: string;
  count: number;
  batch?: number;
  deferredTsOf?: (index: number) => number | undefined;
  concurrency?: number;
}): Promise<number>;
