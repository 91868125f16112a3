/**
 * What a download answers for a `Range` header (docs/releases.md, Download links): the whole file, the bytes from
 * `start`, or 416 when no range of the header falls inside the file.
 */
export type DownloadRange = { kind: 'whole' } | { kind: 'partial'; start: number } | { kind: 'unsatisfiable' };

const FIRST_LAST = /^(\d+)-(\d*)$/;
const SUFFIX = /^-(\d+)$/;

/**
 * The decision for `header` on a file of `size` bytes, as RFC 9110 (14.2) reads it: a header that is not a `bytes`
 * range set (`bytes=abc`, `bytes=5-3`, another unit) is ignored, so the whole file is served; a well-formed set whose
 * ranges all start past the end (or a zero suffix) is unsatisfiable; several ranges are served as the whole file,
 * since the server answers no multipart ranges.
 */
export function decideRange(header: string | undefined, size: number): DownloadRange {
  if (header === undefined) return { kind: 'whole' };
  const set = /^bytes=(.*)$/i.exec(header.trim());
  if (!set) return { kind: 'whole' };
  const starts: number[] = [];
  for (const spec of set[1].split(',').map((s) => s.trim())) {
    const span = FIRST_LAST.exec(spec);
    const suffix = SUFFIX.exec(spec);
    if (span) {
      const first = Number(span[1]);
      if (span[2] !== '' && Number(span[2]) < first) return { kind: 'whole' };
      if (first < size) starts.push(first);
    } else if (suffix) {
      const length = Number(suffix[1]);
      if (length > 0 && size > 0) starts.push(Math.max(0, size - length));
    } else return { kind: 'whole' };
  }
  if (starts.length === 0) return { kind: 'unsatisfiable' };
  if (starts.length > 1) return { kind: 'whole' };
  return { kind: 'partial', start: starts[0] };
}

/** Whether a GET with this decision counts as a download: the whole file, or a range from byte 0 (a resume does not). */
export const countsAsDownload = (range: DownloadRange): boolean =>
  range.kind === 'whole' || (range.kind === 'partial' && range.start === 0);
