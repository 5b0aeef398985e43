import { escapeHtml } from '@recon/protocol';

/**
 * A tagged template for html in which every interpolated value is escaped unless it is itself html built
 * by this template: escaping is the default, not something each call site must remember.
 */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

type Interpolation = Html | string | number | null | undefined | false | readonly Interpolation[];

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let text = strings[0]!;
  values.forEach((value, i) => {
    text += render(value) + strings[i + 1]!;
  });
  return new Html(text);
}

function render(value: Interpolation): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}
