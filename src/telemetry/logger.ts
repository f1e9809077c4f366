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
