import { ErrorCode } from './error-codes';

export interface FieldError {
  field: string;
  message: string;
}

/** The one error type services throw; the global filter renders it as the error body (docs/errors.md, Body). */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  static validation(fields: FieldError[], message = 'Request validation failed'): AppError {
    return new AppError(ErrorCode.VALIDATION_ERROR, 400, message, { fields });
  }

  static field(field: string, message: string): AppError {
    return AppError.validation([{ field, message }]);
  }

  static notFound(what: string): AppError {
    return new AppError(ErrorCode.NOT_FOUND, 404, `${what} not found`);
  }

  static conflict(message: string, details?: Record<string, unknown>, code: ErrorCode = ErrorCode.CONFLICT): AppError {
    return new AppError(code, 409, message, details);
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}
