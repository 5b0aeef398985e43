/**
 * A sandbox of the payment service (interface 3.0) for recon's demo and tests, and for merchants' own integration
 * tests: the process and export endpoints, the cardholder page, notifications, a controllable clock and a seeded
 * scenario with its oracle (the verdicts recon must give). Recon's product code never imports it.
 */
export { createSandbox, type Sandbox, type SandboxEvent, type SandboxOptions } from './sandbox.ts';
export {
  createSandboxAccounts,
  type ExportScope,
  type SandboxAccount,
  type SandboxAccounts,
} from './sandbox-accounts.ts';
export {
  instalmentAndWalletAccounts,
  INSTALMENT_ACCOUNT_IDENTIFIER,
  SCENARIO_ACCOUNT_GROUP,
  WALLET_ACCOUNT_IDENTIFIER,
} from './scenario/instalment-and-wallet-accounts.ts';
export { createSandboxClock, type SandboxClock, type SandboxClockOptions } from './clock.ts';
export { createSandboxStore, type SandboxStore, type SandboxTransaction } from './store.ts';
export type { CardholderOutcome } from './cardholder/finish-cardholder-step.ts';
export type { NotificationDelivery } from './notifications/notification-outbox.ts';
export {
  seedScenario,
  SCENARIO_OUTCOMES,
  type ScenarioOutcome,
  type ScenarioSummary,
} from './scenario/seed-scenario.ts';
export { scenarioOrders, type ScenarioOrder, type ScenarioOrdersOptions } from './scenario/scenario-orders.ts';
export {
  expectedVerdict,
  exportedDate,
  type MerchantOrder,
  type VerdictSettings,
} from './scenario/expected-verdict.ts';
export { createSeededRandom, type SeededRandom } from './scenario/seeded-random.ts';
export { judgedInScope } from './scenario/judged-in-scope.ts';
export {
  VERDICT_STATUSES,
  type OrderStatus,
  type PaymentMethod,
  type RunScope,
  type VerdictStatus,
} from './scenario/verdict-vocabulary.ts';
export { formatOrdersCsv } from './scenario/orders-csv.ts';
export { CALLBACK_FORMATS } from './export/callback-switches.ts';
export { formatExecCode, formatMinorUnits, formatPosition } from './export/format-export-value.ts';
export { writeZip, type ZipOptions } from './export/zip-writer.ts';
export { billingFeesMinorUnits } from './export/billing-fees.ts';
export { SandboxError } from './sandbox-error.ts';
