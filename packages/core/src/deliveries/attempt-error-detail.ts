// The error detail of an attempt without an HTTP answer, as stored (attempts.error_detail, migration 0039) and shown
// (REST `error_detail`, an extension; GraphQL `errorDetail`): the egress client's FailureDetail in the API's words.
import type { FailureCause, FailureDetail, FailurePhase } from '@svc/egress';

export { FAILURE_CAUSES, FAILURE_PHASES } from '@svc/egress';

export interface AttemptErrorDetail {
  phase: FailurePhase;
  cause: FailureCause;
  code: string | null;
  address: string | null;
  port: number | null;
  connection_reused: boolean;
  timings_ms: {
    dns: number | null;
    connect: number | null;
    tls: number | null;
    first_byte: number | null;
    total: number;
  };
}

export function toAttemptErrorDetail(detail: FailureDetail): AttemptErrorDetail {
  const { timings } = detail;
  return {
    phase: detail.phase,
    cause: detail.cause,
    code: detail.code,
    address: detail.address,
    port: detail.port,
    connection_reused: detail.connectionReused,
    timings_ms: {
      dns: timings.dnsMs,
      connect: timings.connectMs,
      tls: timings.tlsMs,
      first_byte: timings.firstByteMs,
      total: timings.totalMs,
    },
  };
}

/** The settlement statement's jsonb parameter for one attempt; null when the attempt had an answer. */
export function errorDetailJson(detail: FailureDetail | null | undefined): string | null {
  return detail ? JSON.stringify(toAttemptErrorDetail(detail)) : null;
}
