// What identifies one request in logs, traces and the audit log: its request id, its trace, its span (carried by the request state).
import type { RequestTelemetry } from '../request/request-telemetry.js';
import type { StreamRecord } from '../request/request-state.js';

export type { RequestTelemetry };

/**
 * What the answer to a request said, for the access line and the audit row alike: the error codes of
 * its GraphQL result, or the code of the refusal that replaced it; and whether it was whole (a status
 * below 400 and a complete result).
 */
export function answerOutcome(telemetry: RequestTelemetry | undefined, status: number, refusalCode: string | undefined, stream?: StreamRecord): { errorCodes: string[]; complete: boolean } {
  // A stream's outcome is its payloads' together (read once it ended).
  if (stream) return { errorCodes: stream.errorCodes, complete: status < 400 && stream.complete };
  const errorCodes = telemetry?.errorCodes?.length ? telemetry.errorCodes : refusalCode ? [refusalCode] : [];
  return { errorCodes, complete: status < 400 && (telemetry?.complete ?? false) };
}
