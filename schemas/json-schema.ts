/**
 * The parts of a JSON Schema that clients walk (the CLI's flag conversion and help, the console's
 * forms): a plain type, since the schemas arrive as JSON from `GET /jobs`.
 */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
}

/** A wire type as a client reads it: its `input_schema` and `output_schema` walked as JsonSchema. */
export type WithJsonSchemas<T> = Omit<T, 'input_schema' | 'output_schema'> & { input_schema: JsonSchema; output_schema: JsonSchema };

type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;
/** Always present after validation with defaults: required, or given a default. */
type Present<S, P, K extends keyof P> = K extends RequiredOf<S> ? true : P[K] extends { default: unknown } ? true : false;
type Flat<T> = { [K in keyof T]: T[K] };
type ObjectOf<S> = S extends { properties: infer P }
  ? Flat<{ -readonly [K in keyof P as Present<S, P, K> extends true ? K : never]: FromJsonSchema<P[K]> } & { -readonly [K in keyof P as Present<S, P, K> extends true ? never : K]?: FromJsonSchema<P[K]> }>
  : Record<string, unknown>;

/**
 * The static type of a plain JSON Schema written as a literal (`as const`, or through a `const`
 * type parameter such as `defineTask`'s): what TypeBox's `Static` is for its own schemas, for
 * code that must not load TypeBox (the task runner). Covers the keywords Task schemas use;
 * anything else is `unknown`. Fields with a default count as present (validation fills them).
 */
export type FromJsonSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer A)[] }
      ? A extends unknown
        ? FromJsonSchema<A>
        : never
      : S extends { type: 'string' }
        ? string
        : S extends { type: 'integer' | 'number' }
          ? number
          : S extends { type: 'boolean' }
            ? boolean
            : S extends { type: 'null' }
              ? null
              : S extends { type: 'array' }
                ? S extends { items: infer I }
                  ? FromJsonSchema<I>[]
                  : unknown[]
                : S extends { type: 'object' }
                  ? ObjectOf<S>
                  : unknown;
