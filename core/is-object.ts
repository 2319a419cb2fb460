/** A plain JSON object (not null, not an array): what a parsed body or message must be to have fields. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
