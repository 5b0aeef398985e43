import { html, type Html } from './html-template.ts';
import { signClass } from './html-money-sections.ts';
import { moneyFirst, movedMoney } from './money-first.ts';
import { formatAmount } from './money-format.ts';
import type { CurrencyMoneyMoved } from './report-money.ts';
import type { RunReport } from './run-report.ts';

/**
 * The top of the page, before any count of verdicts: per currency, the money of the run's last day and of all its
 * days (gross, refunds, fees, net), then the money the open exceptions put at risk, handled and not, and how many
 * exceptions nobody has handled yet.
 */
export function moneyFirstSection(report: RunReport): Html {
  const first = moneyFirst(report);
  const { window, lastDay } = first;
  const moved = window === null ? [] : first.currencies.filter(movedMoney);
  const row = (label: Html, total: CurrencyMoneyMoved) => {
    const money = (minor: string) => formatAmount(minor, total.currency);
    return html`<td>${label}</td><td class="num">${money(total.paidMinor)}</td><td class="num">${money(total.refundedMinor)}</td><td class="num">${money(total.feesMinor)}</td><td class="num ${signClass(total.netMinor)}"><strong>${money(total.netMinor)}</strong></td>`;
  };
  const money =
    window === null || lastDay === null
      ? html`<p>The run has no dated verdict, so no days to show money for.</p>`
      : moved.length === 0
        ? html`<p>No succeeded transaction from ${window.from} to ${window.to}.</p>`
        : html`<table class="money-first"><thead><tr><th>Currency</th><th>Days</th><th class="num">Gross</th><th class="num">Refunds</th><th class="num">Fees</th><th class="num">Net</th></tr></thead>
${moved.map(
  (
    currency,
  ) => html`<tbody class="days"><tr class="last-day"><td rowspan="2"><strong>${currency.currency ?? '—'}</strong></td>${row(html`Last day <span class="muted">${lastDay}</span>`, currency.lastDay)}</tr>
<tr>${row(html`The run's days <span class="muted">${window.from} to ${window.to}</span>`, currency.run)}</tr></tbody>`,
)}</table>`;
  const atRisk = first.currencies.filter(
    ({ atRisk: money }) => money.notHandledExceptions > 0 || money.handledExceptions > 0,
  );
  const amount = (minor: string, unknown: number, currency: string | null) =>
    html`${formatAmount(minor, currency)}${unknown > 0 ? html`<br><span class="muted">+${unknown.toLocaleString('en-US')} unknown</span>` : null}`;
  return html`<section id="money-first"><h2>Money first</h2>
<div class="headline"><span class="figure ${first.exceptionsNotHandled > 0 ? 'bad' : 'ok'}">${first.exceptionsNotHandled.toLocaleString('en-US')}</span> open exception${first.exceptionsNotHandled === 1 ? '' : 's'} not handled yet<span class="muted"> · ${first.exceptionsHandled.toLocaleString('en-US')} handled (acknowledged)</span></div>
${money}
${
  atRisk.length > 0
    ? html`<table class="at-risk-first"><thead><tr><th>Currency</th><th class="num">At risk, not handled</th><th class="num">At risk, handled</th></tr></thead><tbody>${atRisk.map(
        ({ currency, atRisk: money }) =>
          html`<tr><td><strong>${currency ?? '—'}</strong></td><td class="num at-risk${/^0+$/.test(money.notHandledMinor) ? '' : ' some'}">${amount(money.notHandledMinor, money.notHandledUnknown, currency)} <span class="muted">(${money.notHandledExceptions.toLocaleString('en-US')})</span></td><td class="num">${amount(money.handledMinor, money.handledUnknown, currency)} <span class="muted">(${money.handledExceptions.toLocaleString('en-US')})</span></td></tr>`,
      )}</tbody></table>`
    : null
}
<p class="note">Days in ${report.timeZone}: the last day is the last of the run's days with an order created or money moved, at most the day of its as_of. Gross: payments and captures; fees: BILLINGFEES INCL. VAT; net = gross − refunds − fees; every succeeded transaction of those days, whatever order it belongs to. At risk: the money the run's open exceptions put at risk (in brackets, how many exceptions); handled: acknowledged by an accountant before the run finished.</p>
</section>`;
}
