import { readAhead } from '../ingest/read-ahead.ts';

/**
 * The characters of rendered exceptions a report holds before it may write them (64 MB of ascii): some fifty pages
 * of json, more than a csv renders during the summary of a million orders (about thirty-five pages). With half of it,
 * the json report of that run stopped at twenty-seven pages while its summary still ran, and its pages were read and
 * rendered in 8.0 s instead of 7.5 s (a busy machine).
 */
export const RENDERED_AHEAD_CHARS = 64 * 1024 * 1024;

/** The open exceptions as text, rendered from the moment this is called: see renderAhead. */
export interface RenderedAhead extends AsyncIterable<string> {
  /** Stops rendering and waits for the page being read; the text not yet taken is dropped. */
  close(): Promise<void>;
}

/**
 * Renders `pages` as they come, before the report's summary is known: an exception's lines need nothing of it. The
 * summary took a third of a report over a million orders; only two pages were read meanwhile and none was written,
 * so the csv and json reports spent the summary's seconds waiting and then the pages' after them. Rendered, a page
 * weighs much less than its rows as objects, which lets many wait here (up to `limitChars`) where two pages of rows did.
 */
export function renderAhead<P>(
  pages: AsyncIterable<P>,
  render: (page: P) => string,
  limitChars = RENDERED_AHEAD_CHARS,
): RenderedAhead {
  async function* rendered() {
    for await (const page of pages) {
      const text = render(page);
      if (text.length > 0) yield text;
    }
  }
  const ahead = readAhead(rendered(), limitChars, (text) => text.length);
  return {
    async *[Symbol.asyncIterator]() {
      for (let text = await ahead.next(); text !== undefined; text = await ahead.next()) yield text;
    },
    close: () => ahead.close(),
  };
}
