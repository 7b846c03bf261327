// Errors raised by API handlers, mirroring PVE::Exception: a status, a newline-terminated
// message (its first line becomes the HTTP reason phrase) and, for 400, per-parameter errors.
import type { ParamErrors } from './schema-types.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: ParamErrors,
  ) {
    super(message);
  }
}

/** raise_param_exc: 400 "Parameter verification failed." with the errors object. */
export function paramError(errors: ParamErrors): ApiError {
  return new ApiError(400, 'Parameter verification failed.\n', errors);
}

/** raise_perm_exc: 403 "Permission check failed (what)"; without `what` no parentheses. */
export function permError(what?: string): ApiError {
  return new ApiError(403, `Permission check failed${what ? ` (${what})` : ''}\n`);
}

/** A plain Perl `die "...\n"` inside a handler: PVE answers 500 with the text. */
export function dieError(message: string): ApiError {
  return new ApiError(500, message.endsWith('\n') ? message : `${message}\n`);
}
