/**
 * Text put into HTML the daemon writes itself (the docs page, the unsubscribe page, the notice
 * of offloaded attachments): the five characters that could open markup or end an attribute.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
