export type JsonSyntaxErrorReason = 'syntax' | 'duplicate_key' | 'too_deep';

/** Input is not acceptable strict JSON. `offset` is a UTF-16 index into the source (a byte index for UTF-8 input). */
export class JsonSyntaxError extends Error {
  readonly reason: JsonSyntaxErrorReason;
  readonly offset: number;

  constructor(reason: JsonSyntaxErrorReason, offset: number, message: string) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
    this.reason = reason;
    this.offset = offset;
  }
}
