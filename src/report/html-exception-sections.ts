import { decodeExplanation, describeConflict, describeSource, type Explanation } from './explanation.ts';
import { exceptionGroups, type ExceptionGroup } from './exception-groups.ts';
import { html, type Html } from './html-template.ts';
import { signClass } from './html-money-sections.ts';
import { formatAmount } from './money-format.ts';
import { ageingRows, type AgeingRow } from './report-money.ts';
import { humanInstant, humanTimestampText } from './report-time.ts';
import { actedByHtml, untrusted } from './html-untrusted.ts';
import { ID_SHOWN, NOTE_SHOWN } from './untrusted-text.ts';
import { AGE_BUCKETS, type OpenException, type RunReport, type VerdictTotals } from './run-report.ts';

/** A group this small is open when the page opens: read at a glance. A larger one shows its count and money first. */
const OPEN_GROUP_LIMIT = 10;

export function ageingSection(report: RunReport): Html | null {
  const rows = ageingRows(report.ageing);
  if (rows.length === 0) return null;
  const cell = (row: AgeingRow, bucket: (typeof AGE_BUCKETS)[number]) => {
    const { exceptions, atRiskMinor } = row.buckets[bucket];
    return exceptions === 0
      ? html`<td class="num empty">·</td>`
      : html`<td class="num">${exceptions.toLocaleString('en-US')}<br><span class="muted">${formatAmount(atRiskMinor, row.currency)}</span></td>`;
  };
  return html`<section id="ageing"><h2>Open exceptions by age of their order</h2>
<table><thead><tr><th>Status</th><th>Currency</th>${AGE_BUCKETS.map((bucket) => html`<th class="num">${bucket}</th>`)}<th class="num">At risk</th></tr></thead>
<tbody>${rows.map(
    (row) =>
      html`<tr><td><span class="badge">${row.status}</span></td><td>${row.currency ?? '—'}</td>${AGE_BUCKETS.map((bucket) => cell(row, bucket))}<td class="num"><strong>${formatAmount(row.atRiskMinor, row.currency)}</strong>${row.atRiskUnknown > 0 ? html`<br><span class="muted">+${row.atRiskUnknown.toLocaleString('en-US')} unknown</span>` : null}</td></tr>`,
  )}</tbody></table>
<p class="note">Each cell: how many exceptions, and below, the money they put at risk. Age: whole days from the order's creation to the run's as_of (${humanInstant(report.run.asOf)}), so a past run's report reads the same later; no order: an unknown ORDERID. Money at risk: the uncaptured authorization, the expected amount of a missing payment, the amount owed back, or the mismatch (docs/reporting.md says the rule per status).</p>
</section>`;
}

export function exceptionsSection(
  report: RunReport,
  listed: readonly OpenException[],
  totals: VerdictTotals,
  perGroup: number,
): Html {
  const groups = exceptionGroups(report.ageing, listed);
  const fresh = groups.filter((group) => !group.key.acknowledged);
  const acknowledged = groups.filter((group) => group.key.acknowledged);
  const count = (some: readonly ExceptionGroup[]) =>
    some.reduce((sum, group) => sum + group.exceptions, 0).toLocaleString('en-US');
  return html`<section id="exceptions"><h2>Open exceptions (${totals.exceptions.toLocaleString('en-US')})</h2>
${
  groups.length === 0
    ? html`<p>None: every verdict of this run is matched or pending.</p>`
    : html`<h3 id="new-exceptions">To look at (${count(fresh)})</h3>
${fresh.length > 0 ? fresh.map((group) => groupDetails(group, perGroup)) : html`<p>None: every open exception is acknowledged.</p>`}
${acknowledged.length > 0 ? html`<h3 id="acknowledged-exceptions">Acknowledged (${count(acknowledged)})</h3>${acknowledged.map((group) => groupDetails(group, perGroup))}` : null}`
}
<p class="note">Grouped by status, each with its count and money at risk; the ${perGroup.toLocaleString('en-US')} oldest of each group are listed. Acknowledged: marked as handled by an accountant (<code>recon exceptions ack</code>) before the run finished, for the status the exception still has; shown with the last note. <code>recon report --format csv</code> lists them all.</p>
</section>`;
}

function groupDetails(group: ExceptionGroup, perGroup: number): Html {
  const atRisk = group.perCurrency.map(
    (row) =>
      html`<span class="money">${formatAmount(row.atRiskMinor, row.currency)} ${row.currency ?? ''}</span>${row.atRiskUnknown > 0 ? html` <span class="muted">(+${row.atRiskUnknown} unknown)</span>` : null}`,
  );
  const more = group.exceptions - group.listed.length;
  // An acknowledged group was looked at already: it opens on a click.
  const open = !group.key.acknowledged && group.exceptions <= OPEN_GROUP_LIMIT;
  return html`<details class="group${group.key.acknowledged ? ' acknowledged' : ''}" data-status="${group.key.status}"${open ? html` open` : null}>
<summary><span class="badge">${group.key.status}</span> <strong class="count">${group.exceptions.toLocaleString('en-US')}</strong> at risk ${atRisk.map((part, i) => html`${i > 0 ? ' · ' : ''}${part}`)}</summary>
<table>
<thead><tr><th>Order</th><th>Lifecycle</th><th>First seen</th><th class="num">Order age</th><th>Currency</th><th class="num">Expected</th><th class="num">Settled</th><th class="num">Delta</th><th class="num">At risk</th></tr></thead>
${group.listed.map(exceptionRows)}</table>
${more > 0 ? html`<p class="note">Showing the ${group.listed.length.toLocaleString('en-US')} oldest of ${group.exceptions.toLocaleString('en-US')} (at most ${perGroup.toLocaleString('en-US')} per status).</p>` : null}
</details>`;
}

function exceptionRows(exception: OpenException): Html {
  const explanation = decodeExplanation(exception.explanation);
  const money = (minor: string) => formatAmount(minor, exception.currency);
  return html`<tbody class="exception"><tr class="main">
<td class="id">${untrusted(exception.orderId, ID_SHOWN)}</td>
<td>${exception.lifecycle ? html`<span class="badge ${exception.lifecycle}">${exception.lifecycle}</span>` : ''}</td>
<td>${exception.firstSeenAt === null ? '' : humanInstant(exception.firstSeenAt).slice(0, 10)}</td>
<td class="num">${exception.orderAgeDays === null ? '—' : `${exception.orderAgeDays} d`}</td><td>${exception.currency ?? ''}</td>
<td class="num">${money(exception.expectedMinor)}</td><td class="num">${money(exception.settledMinor)}</td>
<td class="num ${signClass(exception.deltaMinor)}">${money(exception.deltaMinor)}</td>
<td class="num"><strong>${exception.atRiskMinor === null ? 'unknown' : money(exception.atRiskMinor)}</strong></td></tr>
${acknowledgement(exception)}
<tr class="explain"><td colspan="9">${explanationDetails(explanation, exception.currency)}</td></tr></tbody>`;
}

/** Who acknowledged it and the last note, under the exception's figures; nothing for an exception without either. */
function acknowledgement(exception: OpenException): Html | null {
  if (!exception.acknowledged && exception.lastNote === null) return null;
  const by = (name: string | null, login: string | null, at: Date | null) =>
    html`${actedByHtml(name, login)}${at === null ? '' : `, ${humanInstant(at)}`}`;
  return html`<tr class="note-row"><td colspan="9">${exception.acknowledged ? html`<span class="badge acknowledged">acknowledged</span> by ${by(exception.acknowledgedBy, exception.acknowledgedLogin, exception.acknowledgedAt)}` : null}${exception.lastNote === null ? null : html`<div class="last-note">“${untrusted(exception.lastNote, NOTE_SHOWN)}” <span class="muted">— ${by(exception.lastNoteBy, exception.lastNoteLogin, exception.lastNoteAt)}</span></div>`}</td></tr>`;
}

function explanationDetails(explanation: Explanation, currency: string | null): Html {
  const transactions = explanation.transactions.map(
    (transaction) => html`<tr>
<td class="id">${untrusted(transaction.transactionId, ID_SHOWN)}</td><td>${untrusted(transaction.operationType)}</td><td><code>${untrusted(transaction.execCode)}</code></td>
<td class="num">${transaction.amountMinor === null ? '' : formatAmount(transaction.amountMinor, transaction.currency)} ${untrusted(transaction.currency)}</td>
<td>${transaction.occurredAt === null ? '' : untrusted(humanTimestampText(transaction.occurredAt))}</td>
<td>${transaction.sourceFile === null ? '' : untrusted(describeSource(transaction))}</td></tr>`,
  );
  const figures = explanation.figures.map(
    ([name, minor]) => html`${untrusted(name)} <strong>${formatAmount(minor, currency)}</strong>`,
  );
  return html`<details class="why"><summary>${untrusted(explanation.reason ?? explanation.rule ?? 'no explanation recorded')}</summary><div class="inner">
${transactions.length > 0 ? html`<table><thead><tr><th>Transaction</th><th>Type</th><th>Exec code</th><th class="num">Amount</th><th>Date</th><th>Source</th></tr></thead><tbody>${transactions}</tbody></table>` : html`<p class="note">No transaction was considered.</p>`}
${explanation.conflicts.length > 0 ? html`<ul class="conflicts">${explanation.conflicts.map((conflict) => html`<li>${untrusted(describeConflict(conflict, currency))}</li>`)}</ul>` : null}
${explanation.warnings.length > 0 ? html`<ul>${explanation.warnings.map((warning) => html`<li>${untrusted(warning)}</li>`)}</ul>` : null}
${figures.length > 0 ? html`<div class="figures">${figures.map((figure, i) => html`${i > 0 ? ' · ' : ''}${figure}`)}</div>` : null}
${explanation.rule ? html`<div class="figures">rule: <code>${untrusted(explanation.rule)}</code></div>` : null}
</div></details>`;
}
