/**
 * An account's `provider`: which provider its relay belongs to and
 * how that provider's webhooks to POST /webhooks/{provider}/{tenant_id} are
 * verified. Each verifier is checked here, so a key that cannot verify
 * anything is refused on save rather than at the first webhook.
 */
import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import type { WebhookSettings } from '../../core/provider/index.js';

/** SendGrid shows its verification key as base64 DER (SubjectPublicKeyInfo); a PEM is accepted too. */
function isPublicKey(text: string): boolean {
  try {
    const key = text.includes('-----BEGIN')
      ? createPublicKey(text)
      : createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec';
  } catch {
    return false;
  }
}

const secretText = z.string().min(1).max(4096);
const secret = (description: string, example: string) => secretText.meta({ description, examples: [example] });
const optionalSecret = (description: string, example: string) =>
  secretText
    .nullable()
    .optional()
    .meta({ description, examples: [example] });
const name = <N extends string>(provider: N) =>
  z.literal(provider).meta({ description: 'The provider.', examples: [provider] });

const ses = z
  .object({
    name: name('ses'),
    topic_arns: z
      .array(
        z.string().regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN'),
      )
      .min(1)
      .max(50)
      .meta({
        description:
          "The SNS topics SES publishes this account's events to; a notification from any other topic is refused.",
        examples: [['arn:aws:sns:eu-west-1:123456789012:ses-events']],
      }),
  })
  .strict();
const sendgrid = z
  .object({
    name: name('sendgrid'),
    public_key: secret(
      "The signed Event Webhook's verification key, as SendGrid shows it (base64) or as a PEM.",
      'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE…',
    ).refine(isPublicKey, 'must be an EC public key (base64 DER or PEM)'),
  })
  .strict();
const mailgun = z
  .object({
    name: name('mailgun'),
    signing_key: secret("The domain's HTTP webhook signing key.", 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0'),
  })
  .strict();
const postmark = z
  .object({
    name: name('postmark'),
    username: optionalSecret('The basic-auth user of the webhook URL, as configured in Postmark.', 'postmark'),
    password: optionalSecret('Its password.', 'webhook-password-1'),
    token: optionalSecret(
      'The value of the `X-Webhook-Token` custom header configured on the webhook.',
      'webhook-token-1',
    ),
  })
  .strict()
  .refine((body) => (body.username != null) === (body.password != null), {
    message: 'username and password go together',
    path: ['password'],
  })
  .refine((body) => body.username != null || body.token != null, {
    message: 'needs basic auth (username and password) or a token',
    path: ['token'],
  });

export const providerBody = z
  .union([ses, sendgrid, mailgun, postmark])
  .nullable()
  .optional()
  .meta({
    description:
      'The provider this relay belongs to, whose webhooks (POST /webhooks/{provider}/{tenant_id}) report deliveries, bounces, complaints and drops: `ses` (`topic_arns`), ' +
      '`sendgrid` (`public_key`), `mailgun` (`signing_key`), `postmark` (`username` and `password`, and/or `token`). Null removes it; omit it to keep the stored one. Never shown back.',
    examples: [{ name: 'mailgun', signing_key: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0' }],
  });

export function toWebhookSettings(body: z.infer<typeof providerBody>): WebhookSettings | null | undefined {
  if (body === undefined || body === null) return body;
  switch (body.name) {
    case 'ses':
      return { provider: 'ses', topicArns: body.topic_arns };
    case 'sendgrid':
      return { provider: 'sendgrid', publicKey: body.public_key };
    case 'mailgun':
      return { provider: 'mailgun', signingKey: body.signing_key };
    case 'postmark':
      return {
        provider: 'postmark',
        username: body.username ?? null,
        password: body.password ?? null,
        token: body.token ?? null,
      };
  }
}
