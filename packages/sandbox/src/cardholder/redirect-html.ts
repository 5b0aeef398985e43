import { escapeHtml } from '@recon/protocol';

/**
 * The REDIRECTHTML of a 0002 answer, before base64: a page the merchant displays that sends the cardholder
 * on to the method's page. The form's action is the page's absolute URL; a browser submits it at once.
 */
export function redirectHtml(pageUrl: string): string {
  const action = escapeHtml(pageUrl);
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"><title>Redirecting to the payment method</title></head>',
    '<body onload="document.forms[0].submit()">',
    `<form method="get" action="${action}">`,
    '<noscript><p>Continue to the payment method to finish your payment.</p></noscript>',
    '<button type="submit">Continue</button>',
    '</form>',
    '</body></html>',
  ].join('\n');
}

export function encodeRedirectHtml(pageUrl: string): string {
  return Buffer.from(redirectHtml(pageUrl), 'utf8').toString('base64');
}
