/**
 * The bulk action as a tool, in two steps: asked without `confirm_token`, it only counts (the
 * API's dry run) and answers a token; asked again with that token and the same parameters, it
 * acts. The token is bound to the caller and the parameters and lasts ten minutes, so an agent
 * cannot act on a filter nobody saw counted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ApiRequest } from './api-call.js';
import { BULK_ROUTE, inputOf, requestOf, type ToolSpec } from './tools.js';

const LIFETIME_MS = 10 * 60_000;

export interface ConfirmTokens {
  issue(who: string, params: Record<string, unknown>, now: number): string;
  /** Whether `token` was issued to `who` for exactly these parameters and has not expired. */
  valid(token: string, who: string, params: Record<string, unknown>, now: number): boolean;
}

/** Parameters in a stable form: keys sorted, absent ones left out. */
const canonical = (params: Record<string, unknown>): string =>
  JSON.stringify(
    Object.keys(params)
      .filter((name) => params[name] !== undefined)
      .sort()
      .map((name) => [name, params[name]]),
  );

export function confirmTokens(key: Buffer): ConfirmTokens {
  const mac = (who: string, params: Record<string, unknown>, expires: number): Buffer =>
    createHmac('sha256', key)
      .update(`${who}\n${canonical(params)}\n${expires}`)
      .digest();
  return {
    issue: (who, params, now) => {
      const expires = now + LIFETIME_MS;
      return `${expires}.${mac(who, params, expires).toString('base64url')}`;
    },
    valid: (token, who, params, now) => {
      const [expiresText, macText] = token.split('.');
      const expires = Number(expiresText);
      if (!Number.isSafeInteger(expires) || expires < now || macText === undefined) return false;
      const given = Buffer.from(macText, 'base64url');
      const wanted = mac(who, params, expires);
      return given.length === wanted.length && timingSafeEqual(given, wanted);
    },
  };
}

export type BulkStep = { run: ApiRequest; confirm: null } | { run: ApiRequest; confirm: string } | { refused: string };

const input = inputOf(BULK_ROUTE)
  .omit({ dry_run: true })
  .extend({
    confirm_token: z
      .string()
      .max(200)
      .optional()
      .meta({
        description: 'The token the dry run answered: with it (and the same parameters) the action runs.',
        examples: ['1764000600000.Zm9vYmFy'],
      }),
  });

export const BULK_TOOL: Omit<ToolSpec, 'request'> = {
  name: 'bulk_action',
  title: 'Bulk action',
  description:
    'Retry, resend, delete, suspend or activate every message a filter finds. First call without `confirm_token`: ' +
    'nothing changes, the answer counts what the action would reach and gives a `confirm_token`; call again with it and ' +
    `the same parameters to act (POST /commands/bulk: ${BULK_ROUTE.summary}).`,
  changes: true,
  destructive: true,
  input,
};

/** What a call of the bulk tool does: the dry run (and the token to answer), or the run its token confirms. */
export function bulkStep(tokens: ConfirmTokens, who: string, args: Record<string, unknown>, now: number): BulkStep {
  const { confirm_token: token, ...params } = args;
  if (token === undefined)
    return { run: requestOf(BULK_ROUTE, { ...params, dry_run: true }), confirm: tokens.issue(who, params, now) };
  if (typeof token !== 'string' || !tokens.valid(token, who, params, now))
    return {
      refused:
        'confirm_token is not one the dry run of these same parameters answered you, or it expired: call bulk_action without it first',
    };
  return { run: requestOf(BULK_ROUTE, { ...params, dry_run: false }), confirm: null };
}
