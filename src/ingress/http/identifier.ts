/** The API's identifier: tenant, account and client ids (IDENTIFIER_PATTERN). A leaf: every schema module may import it. */
import { z } from 'zod';
import { IDENTIFIER_PATTERN } from '../../core/index.js';

export const identifier = z.string().regex(IDENTIFIER_PATTERN, 'must match ^[A-Za-z0-9_-]{1,64}$');

/** A domain, or `*.domain` for it and its subdomains (routing rules, destination limits). */
export const domainPattern = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[a-z0-9.-]+$/i, 'a domain, or *.domain for it and its subdomains');
