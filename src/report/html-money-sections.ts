import { html, type Html } from './html-template.ts';
import { formatAmount } from './money-format.ts';
import { differenceByStatus, moneyMovedPerCurrency, type CurrencyDifference } from './report-money.ts';
import { untrusted } from './html-untrusted.ts';
import { RECEIVED_LABELS, receivedByCurrency } from './received-lines.ts';
import { ID_SHOWN } from './untrusted-text.ts';
import { accountName, showsAccounts, type RunReport } from './run-report.ts';

/**
 * The html report's money: the bridge with its difference explained by status, what each account settled, and the
 * money moved on the run's days. Amounts in each currency's units, never summed across currencies.
 */
export function bridgeSection(report: RunReport): Html {
  const differences = differenceByStatus(report.bridge, report.statusTotals);
  const blocks = differences.map((difference) => currencyBlock(difference));
  return html`<section id="bridge"><h2>Expected vs settled, and the difference by status</h2>
<table><thead><tr><th>Currency / status</th><th class="num">Verdicts</th><th class="num">Expected</th><th class="num">Settled</th><th class="num">Difference</th><th class="num">At risk</th><th>Share of the difference</th></tr></thead>
${blocks.length > 0 ? blocks : html`<tbody><tr><td colspan="7">No amounts in this run.</td></tr></tbody>`}</table>
<p class="note">Per currency, in its own units (never summed across currencies). Difference = settled − expected; settled includes the money of unknown orders. The statuses' rows add up to their currency's. At risk: the money the verdicts put at risk, which a difference of 0.00 may hide (the authorized money of an order never captured). Each bar is one status's difference from a zero line, on one scale per currency (the longest bar is the currency's largest part): offsetting errors show side by side instead of cancelling out in the total.</p>
</section>`;
}

function currencyBlock({ bridge, differenceMinor, atRiskMinor, atRiskUnknown, parts }: CurrencyDifference): Html {
  const abs = (minor: string) => (minor.startsWith('-') ? BigInt(minor.slice(1)) : BigInt(minor));
  const scale = [differenceMinor, ...parts.map((part) => part.differenceMinor)].reduce(
    (max, minor) => (abs(minor) > max ? abs(minor) : max),
    0n,
  );
  const money = (minor: string) => formatAmount(minor, bridge.currency);
  const rows = parts.map(
    (part) => html`<tr class="part">
<td><span class="badge ${part.status === 'matched' || part.status === 'pending' ? part.status : 'exception'}">${part.status}</span></td><td class="num">${part.verdicts.toLocaleString('en-US')}</td>
<td class="num">${money(part.expectedMinor)}</td><td class="num">${money(part.settledMinor)}</td>
<td class="num ${signClass(part.differenceMinor)}">${money(part.differenceMinor)}</td>${atRiskCell(part.atRiskMinor, part.atRiskUnknown, bridge.currency)}<td>${differenceBar(part.differenceMinor, scale, `${part.status}: ${money(part.differenceMinor)} ${bridge.currency}`)}</td></tr>`,
  );
  return html`<tbody class="currency"><tr class="total">
<td><strong>${bridge.currency}</strong> <span class="muted">${bridge.orders.toLocaleString('en-US')} order${bridge.orders === 1 ? '' : 's'}, ${bridge.unknownOrders.toLocaleString('en-US')} unknown</span></td><td class="num">${(bridge.orders + bridge.unknownOrders).toLocaleString('en-US')}</td>
<td class="num">${money(bridge.expectedMinor)}</td><td class="num">${money(bridge.settledMinor)}</td>
<td class="num ${signClass(differenceMinor)}"><strong>${money(differenceMinor)}</strong></td>${atRiskCell(atRiskMinor, atRiskUnknown, bridge.currency)}<td>${differenceBar(differenceMinor, scale, `total: ${money(differenceMinor)} ${bridge.currency}`)}</td></tr>
${rows}</tbody>`;
}

/** The money at risk, marked when there is some: beside a difference of 0.00 it is what the difference hides. */
function atRiskCell(minor: string, unknown: number, currency: string): Html {
  return html`<td class="num at-risk${/^0+$/.test(minor) ? '' : ' some'}">${formatAmount(minor, currency)}${unknown > 0 ? html`<br><span class="muted">+${unknown.toLocaleString('en-US')} unknown</span>` : null}</td>`;
}

/** A bar from the middle: right for money settled beyond what was expected, left for money missing. `label` says it in words. */
function differenceBar(minor: string, scale: bigint, label: string): Html {
  const value = BigInt(minor);
  const half = 100;
  // Pixels, not money: a per-mille ratio taken in bigint, then drawn.
  const exact =
    scale === 0n || value === 0n ? 0 : (Number(((value < 0n ? -value : value) * 1000n) / scale) / 1000) * half;
  // At least one pixel: a small part beside a large one must still show.
  const length = exact === 0 ? 0 : Math.max(1, Math.round(exact * 10) / 10);
  const bar =
    length === 0
      ? null
      : html`<rect class="${value < 0n ? 'short' : 'over'}" x="${value < 0n ? Math.round((half - length) * 10) / 10 : half}" y="3" height="12" width="${length}"/>`;
  // Drawn on 200 units, stretched to the column's width: the page fits a narrow window, the bars keep their ratios.
  return html`<svg class="difference-bar" viewBox="0 0 200 18" preserveAspectRatio="none" role="img" aria-label="${label}"><line x1="${half}" x2="${half}" y1="0" y2="18" vector-effect="non-scaling-stroke"/>${bar}</svg>`;
}

/** From the money received to the bridge's settled, per currency; none for a run without totals (one cut short). */
export function receivedSection(report: RunReport): Html | null {
  if (report.receivedToBridge.length === 0) return null;
  const blocks = receivedByCurrency(report.receivedToBridge).map(({ currency, lines }) => {
    const money = (minor: string) => formatAmount(minor, currency);
    const rows = lines.map(
      (line) =>
        html`<tr class="${line.line === 'settled' ? 'total' : line.line === 'received' ? 'received' : 'part'}"><td>${line.line === 'received' ? html`<strong>${currency}</strong> ` : null}${RECEIVED_LABELS[line.line]}</td><td class="num">${line.orders === null ? '' : line.orders.toLocaleString('en-US')}</td><td class="num">${line.transactions === null ? '' : line.transactions.toLocaleString('en-US')}</td><td class="num ${line.line === 'settled' || line.line === 'received' ? '' : signClass(line.amountMinor)}">${line.line === 'settled' ? html`<strong>${money(line.amountMinor)}</strong>` : money(line.amountMinor)}</td><td class="num">${line.feesMinor === null ? '' : money(line.feesMinor)}</td></tr>`,
    );
    return html`<tbody class="received-currency">${rows}</tbody>`;
  });
  return html`<section id="received"><h2>From the money received to the bridge's settled</h2>
<table><thead><tr><th>Currency / line</th><th class="num">Orders</th><th class="num">Transactions</th><th class="num">Amount</th><th class="num">Fees</th></tr></thead>${blocks}</table>
<p class="note">Per currency, in its own units: the succeeded payments and captures minus refunds of the run's orders and unknown ORDERIDs, as the run read them, then what the bridge counts elsewhere or adds, down to its settled (the bridge above): every currency's lines add up. Money paid in another currency than its order's (currency_mismatch) is in no bridge; an unknown ORDERID's money counts in the currency of its first transaction. Fees: BILLINGFEES INCL. VAT of the money received. Orders are counted once per account they moved money through.</p>
</section>`;
}

/** Settled per account and currency; none when the run's transactions went through a single unnamed account. */
export function accountsSection(report: RunReport): Html | null {
  if (!showsAccounts(report.accounts)) return null;
  const rows = report.accounts.map((account) => {
    const money = (minor: string) => formatAmount(minor, account.currency);
    return html`<tr><td><strong>${untrusted(accountName(account), ID_SHOWN)}</strong></td><td>${untrusted(account.accountGroup, ID_SHOWN)}</td><td>${account.currency ?? '—'}</td>
<td class="num">${account.orders.toLocaleString('en-US')}</td><td class="num">${account.transactions.toLocaleString('en-US')}</td>
<td class="num">${money(account.paidMinor)}</td><td class="num">${money(account.refundedMinor)}</td><td class="num ${signClass(account.settledMinor)}"><strong>${money(account.settledMinor)}</strong></td></tr>`;
  });
  return html`<section id="accounts"><h2>Settled per account</h2>
<table><thead><tr><th>Account</th><th>Group</th><th>Currency</th><th class="num">Orders</th><th class="num">Transactions</th><th class="num">Paid</th><th class="num">Refunded</th><th class="num">Settled</th></tr></thead><tbody>${rows}</tbody></table>
<p class="note">What each processing account settled for the run's orders: their succeeded transactions, as recon holds them now. Paid: payments and captures; settled = paid − refunded. Per currency, in its own units; an account's group as recon is configured now. Expected money belongs to an order, not to an account: it is in the bridge above.</p>
</section>`;
}

export function moneyMovedSection(report: RunReport): Html {
  const { window, days } = report.moneyMoved;
  const totals = moneyMovedPerCurrency(days);
  const rows = totals.map((total) => {
    const money = (minor: string) => formatAmount(minor, total.currency);
    return html`<tr><td><strong>${total.currency ?? '—'}</strong></td><td class="num">${total.transactions.toLocaleString('en-US')}</td>
<td class="num">${money(total.paidMinor)}</td><td class="num">${money(total.refundedMinor)}</td><td class="num">${money(total.feesMinor)}</td>
<td class="num ${signClass(total.netMinor)}"><strong>${money(total.netMinor)}</strong></td></tr>`;
  });
  const body =
    window === null
      ? html`<p>The run has no dated verdict, so no days to show money for.</p>`
      : rows.length === 0
        ? html`<p>No succeeded transaction from ${window.from} to ${window.to}.</p>`
        : html`<table><thead><tr><th>Currency</th><th class="num">Transactions</th><th class="num">Gross</th><th class="num">Refunds</th><th class="num">Fees</th><th class="num">Net</th></tr></thead><tbody>${rows}</tbody></table>`;
  return html`<section id="money"><h2>Money moved${window === null ? '' : ` ${window.from} to ${window.to}`}</h2>
${body}
<p class="note">What the service moved on the run's days (${report.timeZone}), from the first day an order of the run was created to the day of its as_of: every succeeded transaction of those days, whatever order it belongs to, as recon holds them now. Gross: payments and captures; fees: BILLINGFEES INCL. VAT; net = gross − refunds − fees.</p>
</section>`;
}

/** Money per day as a table, folded: the chart above shows its shape, this its figures. */
export function moneyPerDayTable(report: RunReport): Html | null {
  const { days } = report.moneyMoved;
  if (days.length === 0) return null;
  const rows = days.map((day) => {
    const money = (minor: string) => formatAmount(minor, day.currency);
    return html`<tr><td>${day.day}</td><td>${day.currency ?? '—'}</td><td class="num">${day.transactions.toLocaleString('en-US')}</td><td class="num">${money(day.paidMinor)}</td><td class="num">${money(day.refundedMinor)}</td><td class="num">${money(day.feesMinor)}</td><td class="num ${signClass(day.netMinor)}">${money(day.netMinor)}</td></tr>`;
  });
  return html`<details class="days"><summary>Money moved per day (${days.length.toLocaleString('en-US')} rows)</summary>
<table><thead><tr><th>Day</th><th>Currency</th><th class="num">Transactions</th><th class="num">Gross</th><th class="num">Refunds</th><th class="num">Fees</th><th class="num">Net</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

export function signClass(minor: string): string {
  return minor.startsWith('-') ? 'neg' : /^0+$/.test(minor) ? '' : 'pos';
}
