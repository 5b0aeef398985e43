import { html, type Html } from './html-template.ts';
import { untrusted } from './html-untrusted.ts';
import type { RunReport } from './run-report.ts';
import { ID_SHOWN } from './untrusted-text.ts';

/**
 * The warnings on the run's verdicts: a warning changes no status, so a matched order paid on the wrong account is
 * in no group of exceptions; here it is, counted whole and the first listed by order id.
 */
export function warningsSection(report: RunReport): Html {
  const { verdicts, warnings, listed } = report.verdictWarnings;
  const more = warnings - listed.length;
  return html`<section id="warnings"><h2>Warnings (${warnings.toLocaleString('en-US')})</h2>
${
  warnings === 0
    ? html`<p>None: no verdict of this run carries a warning.</p>`
    : html`<p>${warnings.toLocaleString('en-US')} warning${warnings === 1 ? '' : 's'} on ${verdicts.toLocaleString('en-US')} verdict${verdicts === 1 ? '' : 's'}, whatever their status: a warning changes none, so a matched order paid on an account that does not serve its payment method is in no group of exceptions above.</p>
<table><thead><tr><th>Order</th><th>Status</th><th>Currency</th><th>Account</th><th>Warning</th></tr></thead><tbody>${listed.map(
        (warning) =>
          html`<tr><td class="id">${untrusted(warning.orderId, ID_SHOWN)}</td><td><span class="badge ${warning.status === 'matched' || warning.status === 'pending' ? warning.status : 'exception'}">${warning.status}</span></td><td>${warning.currency ?? ''}</td><td class="id">${untrusted(warning.identifier, ID_SHOWN)}</td><td>${untrusted(warning.warning)}</td></tr>`,
      )}</tbody></table>
${more > 0 ? html`<p class="note">Showing the first ${listed.length.toLocaleString('en-US')} by order id; <code>recon report --format csv</code> lists more, and <code>reporting.warnings</code> every warning of the current verdicts.</p>` : null}`
}
</section>`;
}
