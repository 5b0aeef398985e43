import type { SandboxAccount } from '../sandbox-accounts.ts';

export const INSTALMENT_ACCOUNT_IDENTIFIER = 'sandbox-instalment';
export const WALLET_ACCOUNT_IDENTIFIER = 'sandbox-wallet';
export const SCENARIO_ACCOUNT_GROUP = 'sandbox-shop';

/**
 * A merchant with one account per payment method, both in one group: given to createSandbox with a seed, the
 * scenario's instalment orders are made on the first and its wallet orders on the second. The caller chooses the
 * secrets, so that recon is configured with the same ones.
 */
export function instalmentAndWalletAccounts(secrets: {
  readonly instalment: string;
  readonly wallet: string;
}): [SandboxAccount, SandboxAccount] {
  return [
    {
      identifier: INSTALMENT_ACCOUNT_IDENTIFIER,
      secret: secrets.instalment,
      group: SCENARIO_ACCOUNT_GROUP,
      paymentMethods: ['instalment'],
    },
    {
      identifier: WALLET_ACCOUNT_IDENTIFIER,
      secret: secrets.wallet,
      group: SCENARIO_ACCOUNT_GROUP,
      paymentMethods: ['wallet'],
    },
  ];
}
