import { pipeline, type Readable } from 'node:stream';

/**
 * Pipes `streams` into one another and returns the last, the one the consumer reads. `pipeline` destroys
 * every stage with the first error (so the last stage sees it and can translate it) and destroys the
 * upstream stages, child processes included, when the consumer stops reading early; the error therefore
 * needs no handling here.
 */
export function chainStreams(streams: readonly [Readable, ...NodeJS.ReadWriteStream[]]): Readable {
  pipeline(streams, () => {});
  return streams[streams.length - 1] as Readable;
}
