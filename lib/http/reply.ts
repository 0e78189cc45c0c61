import type { z } from "zod";
import type { Contract } from "./contract";

type ResponsesOf<C extends Contract> = C["responses"];

// keys spread in from `as const` objects (the shared error replies) come out as strings ("404")
type StatusOf<K> = K extends number ? K : K extends `${infer N extends number}` ? N : never;
type SpecOf<C extends Contract, S extends number> = S extends keyof ResponsesOf<C>
  ? ResponsesOf<C>[S]
  : `${S}` extends keyof ResponsesOf<C>
    ? ResponsesOf<C>[`${S}`]
    : never;

/** The statuses whose reply is a JSON body the contract declares a schema for. */
export type JsonStatus<C extends Contract> = {
  [K in keyof ResponsesOf<C>]: ResponsesOf<C>[K] extends { schema: z.ZodType }
    ? ResponsesOf<C>[K] extends { mediaType: string }
      ? never
      : StatusOf<K>
    : never;
}[keyof ResponsesOf<C>];

/** The statuses whose reply is not a JSON body: none at all (204, 304), a declared media type (CSV), or a body the contract leaves open. */
type RawStatus<C extends Contract> = {
  [K in keyof ResponsesOf<C>]: ResponsesOf<C>[K] extends { schema: z.ZodType }
    ? ResponsesOf<C>[K] extends { mediaType: string }
      ? StatusOf<K>
      : never
    : StatusOf<K>;
}[keyof ResponsesOf<C>];

/**
 * The body a status's schema accepts: its input type, since what is checked is the JSON as sent
 * (times are ISO strings there, never Dates) and a field with a default may be left out.
 */
export type BodyOf<C extends Contract, S extends number> = SpecOf<C, S> extends { schema: infer Z extends z.ZodType } ? z.input<Z> : never;

/**
 * What a route handler answers. Only its context's `reply` and `send` make one, typed by the
 * handler's contract, so a handler cannot answer a status its contract does not list or a JSON
 * body its schema does not describe: such a drift from the OpenAPI document fails the build.
 */
export class Reply {
  readonly #response: Response;
  constructor(response: Response) {
    this.#response = response;
  }
  get response(): Response {
    return this.#response;
  }
}

/**
 * `T` with every field its shape does not declare turned into `never`, at any depth: a body built
 * elsewhere (not an object literal, which TypeScript checks itself) cannot smuggle out a field the
 * OpenAPI document does not mention.
 */
type NoExtra<Shape, T> = unknown extends Shape
  ? T
  : T extends readonly (infer E)[]
    ? Shape extends readonly (infer SE)[]
      ? readonly NoExtra<SE, E>[]
      : T
    : T extends object
      ? true extends HasIndex<NonNullable<Shape>>
        ? T
        : { [K in keyof T]: K extends KeysOf<NonNullable<Shape>> ? NoExtra<ValueOf<NonNullable<Shape>, K>, T[K]> : never }
      : T;
// a shape with an index signature (a record, a JSON value) declares every key
type HasIndex<U> = U extends object ? (string extends keyof U ? true : false) : false;
type KeysOf<U> = U extends unknown ? keyof U : never;
type ValueOf<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? U[K] : never) : never;

export interface Replies<C extends Contract> {
  /** A JSON reply: `status` one the contract lists with a schema, `body` what that schema accepts. */
  reply: <S extends JsonStatus<C>, T extends BodyOf<C, S>>(status: S, body: T & NoExtra<BodyOf<C, S>, T>, headers?: HeadersInit) => Reply;
  /**
   * A reply that is not a JSON body, with a status the contract lists without a JSON schema: no
   * body (204, 304), a declared media type (a CSV export), or a body the contract leaves open (the
   * Prometheus exposition). A ready Response must carry that status.
   */
  send: <S extends RawStatus<C>>(status: S, body?: Response | BodyInit | null, headers?: HeadersInit) => Reply;
}

export function repliesFor<C extends Contract>(): Replies<C> {
  return {
    reply: (status, body, headers) => new Reply(Response.json(body, { status, headers })),
    send: (status, body, headers) => {
      if (body instanceof Response) {
        if (body.status !== status) throw new Error(`a ${body.status} response sent as ${status}`);
        for (const [k, v] of new Headers(headers)) body.headers.set(k, v);
        return new Reply(body);
      }
      return new Reply(new Response(body ?? null, { status, headers }));
    },
  };
}
