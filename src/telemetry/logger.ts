// Structured JSON logs (pino); secrets such as authorization headers are redacted.
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export interface LoggerOptions {
  level: string;
  /** Where lines go; default stdout. Tests pass a stream to read them. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'switchyard' },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', 'token'], censor: '[redacted]' },
    },
    options.destination as pino.DestinationStream | undefined,
  );
}

/**
 * What hears the errors masked in a streamed payload (a deferred part, a subscription event): the
 * client read `Unexpected error.`, the log keeps the error with the operation it was part of, under
 * one message for both kinds of stream, so one search finds them all.
 */
export function maskedErrorLogger(logger: Logger | undefined, operation: string | null | undefined): (error: unknown) => void {
  return function logMasked(error) {
    logger?.error({ err: error, operation }, 'unexpected error masked in a streamed payload');
  };
}
