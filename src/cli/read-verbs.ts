/**
 * The reading verbs (`list`, `show`) built from one row each of the resource table
 * (verbs/resources.ts): the route to GET, the options that become its query, and
 * what to print (a table's rows and columns, or a `key: value` block). Asking,
 * choosing the tenant and --json are the same for every resource, here once.
 */
import { integerOption, stringOption, type OptionSpec, type OptionValues } from './args.js';
import { ok, report, type Result } from './cli-error.js';
import { apiCall, tenantCall, type Verb, type VerbInput } from './command.js';
import { table, type Column } from './output.js';

/** A verb that acts on one tenant: --tenant, else the daemon's only tenant (tenant-choice.ts), sent as `tenant_id`. */
const TENANT_OPTION: OptionSpec = { tenant: { type: 'string' } };

export interface ListSpec<A, R> {
  usage: string;
  summary: string;
  /** The route; a function of the verb's one argument when it takes one (`tenants report-log ID`). */
  path: string | ((id: string) => string);
  /** Acts on one tenant (tenant-choice.ts); otherwise --tenant, when given, is a filter among `query`. */
  perTenant?: boolean;
  /** --option -> the query parameter it sets, as given. */
  query?: Readonly<Record<string, string>>;
  /** --option -> the query parameter it sets, a whole number of at least 1, checked before anything is asked. */
  counts?: Readonly<Record<string, string>>;
  rows(answer: A): readonly R[];
  columns: readonly Column<R>[];
  /** After the table: the next page, the nodes that did not answer. */
  footer?(answer: A): string;
}

export interface ShowSpec<A> {
  usage: string;
  summary: string;
  path(id: string): string;
  perTenant?: boolean;
  render(answer: A): string;
}

/** The counted options as query parameters, or the first that is not a whole number. */
function countQuery(
  values: OptionValues,
  counts: Readonly<Record<string, string>>,
): Result<Record<string, number | undefined>> {
  const query: Record<string, number | undefined> = {};
  for (const [option, parameter] of Object.entries(counts)) {
    const value = integerOption(values, option, 1);
    if (!value.ok) return value;
    query[parameter] = value.value;
  }
  return ok(query);
}

/** GET `path` with `query`, for the chosen tenant when the verb acts on one; `human` prints the answer. */
function read<A>(
  input: VerbInput,
  perTenant: boolean,
  path: string,
  query: Record<string, string | number | undefined>,
  human: (answer: A) => string,
) {
  if (!perTenant) return apiCall(input, (client) => client.request<A>('GET', path, { query }), human);
  return tenantCall(
    input,
    (client, tenantId) => client.request<A>('GET', path, { query: { tenant_id: tenantId, ...query } }),
    human,
  );
}

export function listVerb<A, R>(spec: ListSpec<A, R>): Verb {
  const optionNames = [...Object.keys(spec.query ?? {}), ...Object.keys(spec.counts ?? {})];
  const takesId = typeof spec.path === 'function';
  return {
    usage: spec.usage,
    summary: spec.summary,
    options: {
      ...(spec.perTenant ? TENANT_OPTION : {}),
      ...Object.fromEntries(optionNames.map((name) => [name, { type: 'string' as const }])),
    },
    positionals: takesId ? [1, 1] : [0, 0],
    api: true,
    run: async (input) => {
      const counts = countQuery(input.values, spec.counts ?? {});
      if (!counts.ok) return report(input.cli.stderr, counts.error);
      const given = Object.entries(spec.query ?? {}).map(
        ([option, parameter]) => [parameter, stringOption(input.values, option)] as const,
      );
      const path = typeof spec.path === 'string' ? spec.path : spec.path(input.positionals[0] ?? '');
      return read<A>(
        input,
        spec.perTenant === true,
        path,
        { ...Object.fromEntries(given), ...counts.value },
        (answer) => {
          const rows = table(spec.rows(answer), spec.columns);
          return spec.footer === undefined ? rows : rows + spec.footer(answer);
        },
      );
    },
  };
}

export function showVerb<A>(spec: ShowSpec<A>): Verb {
  return {
    usage: spec.usage,
    summary: spec.summary,
    ...(spec.perTenant ? { options: TENANT_OPTION } : {}),
    positionals: [1, 1],
    api: true,
    run: (input) => read<A>(input, spec.perTenant === true, spec.path(input.positionals[0] ?? ''), {}, spec.render),
  };
}
