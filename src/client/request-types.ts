import type { CartFieldName, Compression, ExportColumn, PaymentOption } from '@recon/protocol';

/**
 * Typed requests, fields named as in payment-api-3.0.md. The client adds IDENTIFIER, OPERATIONTYPE,
 * VERSION and HASH. Money is bigint minor units. Formats (lengths, e-mail, dates, ...) are checked at run
 * time against the field dictionary before anything is sent.
 */
export type CartItemInput = { readonly [Field in CartFieldName]?: string };

type Optional<Name extends string> = { readonly [Field in Name]?: string };

interface PaymentBase {
  readonly ORDERID: string;
  readonly AMOUNT: bigint;
  readonly CLIENTIDENT: string;
  readonly CLIENTEMAIL: string;
  readonly CLIENTUSERAGENT: string;
  readonly CLIENTIP: string;
  readonly DESCRIPTION: string;
  readonly CART?: readonly CartItemInput[];
}

/** E3: the wallet method, payment or authorization. */
export type WalletPaymentRequest = PaymentBase &
  Optional<
    | 'APIKEYID'
    | 'BILLINGADDRESS'
    | 'BILLINGCOUNTRY'
    | 'BILLINGFIRSTNAME'
    | 'BILLINGLASTNAME'
    | 'BILLINGPHONE'
    | 'BILLINGPOSTALCODE'
    | 'CLIENTREFERRER'
    | 'EXTRADATA'
    | 'SHIPTOADDRESS'
    | 'SHIPTOCOUNTRY'
    | 'SHIPTOFIRSTNAME'
    | 'SHIPTOLASTNAME'
    | 'SHIPTOPHONE'
    | 'SHIPTOPOSTALCODE'
    | 'CARDFULLNAME'
    | 'CLIENTADDRESS'
    | 'CLIENTDOB'
    | 'METADATA'
  >;

/** E2: the instalment method, authorization only. Its 150-2000 EUR range is the service's rule, not checked here. */
export type InstalmentAuthorizationRequest = PaymentBase & { readonly PAYMENTOPTION: PaymentOption } & Optional<
    | 'BILLINGTITLE'
    | 'BILLINGFIRSTNAME'
    | 'BILLINGLASTNAME'
    | 'BILLINGADDRESS'
    | 'BILLINGPOSTALCODE'
    | 'BILLINGCITY'
    | 'BILLINGCOUNTRY'
    | 'BILLINGPHONE'
    | 'BILLINGMOBILEPHONE'
    | 'SHIPTOCOMPANYNAME'
    | 'SHIPTOTITLE'
    | 'SHIPTOFIRSTNAME'
    | 'SHIPTOLASTNAME'
    | 'SHIPTOADDRESS'
    | 'SHIPTOPOSTALCODE'
    | 'SHIPTOCITY'
    | 'SHIPTOCOUNTRY'
    | 'SHIPTOPHONE'
    | 'SHIPTOMOBILEPHONE'
    | 'APIKEYID'
    | 'EXTRADATA'
    | 'METADATA'
  >;

export type AuthorizationRequest =
  | ({ readonly method: 'instalment' } & InstalmentAuthorizationRequest)
  | ({ readonly method: 'wallet' } & WalletPaymentRequest);

/** E4 and E5: AMOUNT absent means all of it (the authorization, or the resting amount). */
export interface CaptureOrRefundRequest {
  readonly TRANSACTIONID: string;
  readonly ORDERID: string;
  readonly DESCRIPTION: string;
  readonly AMOUNT?: bigint;
  readonly EXTRADATA?: string;
}

export type TransactionSelection =
  | { readonly ORDERID: readonly string[]; readonly TRANSACTIONID?: never }
  | { readonly TRANSACTIONID: readonly string[]; readonly ORDERID?: never };

export type ExportOptions = TransactionSelection & {
  readonly COLUMNS?: readonly ExportColumn[];
  readonly SCOPE?: 'CLIENTSGROUP' | 'CLIENT';
  readonly TIMEZONE?: string;
};

/** E1 answered at once with DATA. */
export type SyncExportRequest = ExportOptions & { readonly CALLBACKURL?: never; readonly MAILTO?: never };

/** E1 delivered later as a compressed csv, to a URL (at most 32 characters) or by e-mail. */
export type AsyncExportRequest = ExportOptions & { readonly COMPRESSION: Compression } & (
    | { readonly CALLBACKURL: string; readonly MAILTO?: never }
    | { readonly MAILTO: string; readonly CALLBACKURL?: never }
  );
