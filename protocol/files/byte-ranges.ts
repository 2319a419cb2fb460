/** What a `Range` header asks of a file of a given size (RFC 9110, section 14). */
export type RangeAnswer =
  | { readonly kind: 'whole' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const WHOLE: RangeAnswer = Object.freeze({ kind: 'whole' });
const UNSATISFIABLE: RangeAnswer = Object.freeze({ kind: 'unsatisfiable' });
const SPEC = /^(\d*)-(\d*)$/;

/**
 * One byte range, or the whole file. A header this server does not understand (another unit,
 * bad syntax) is ignored, as the RFC asks; several ranges are answered with the whole file (the
 * RFC allows it, and it spares a multipart body). Ranges past the end are clipped; a range that
 * starts past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return WHOLE;
  const eq = header.indexOf('=');
  if (eq === -1 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return WHOLE;
  const specs = header.slice(eq + 1).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length !== 1) return WHOLE;
  const match = SPEC.exec(specs[0]!);
  if (!match) return WHOLE;
  const [, first = '', last = ''] = match;
  if (first === '') {
    // `-n`: the last n bytes.
    if (last === '') return WHOLE;
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return UNSATISFIABLE;
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return WHOLE;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'partial', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
