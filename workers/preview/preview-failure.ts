/**
 * A business failure raised inside a pool thread. Errors lose their class crossing the thread
 * boundary, so the worker returns it as data (`PreviewOutcome`) and the supervisor rethrows it as
 * a BusinessError of the same type.
 */
export class PreviewFailure extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}
