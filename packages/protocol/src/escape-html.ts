const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text, or an attribute value in either quote, made safe to put in HTML. One escaper for both ends: the sandbox
 * writes REDIRECTHTML and its cardholder pages from request values, recon its html report from export data.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}
