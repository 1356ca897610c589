/**
 * The SQL of a stream token's check, shared by its authentication (stream-tokens.service.ts) and by the statement
 * that reads an acknowledgement's leases (stream-settle.ts), which checks the token in the same statement. The
 * parameters' placeholders are the caller's.
 */

/** The token's row (id, team_id, endpoint_id, last_used_at), for its own endpoint only: none when it is not valid. */
export function streamTokenLookup(p: { tokenSha256: string; endpointId: string }): string {
  return `SELECT t.id, t.team_id, t.endpoint_id, t.last_used_at
     FROM stream_tokens t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.token_sha256 = ${p.tokenSha256} AND t.endpoint_id = ${p.endpointId} AND t.revoked_at IS NULL
      AND e.deleted_at IS NULL AND e.delivery_mode = 'stream'`;
}

/** last_used_at of the token found (a CTE named `caller`), rewritten at most every `resolutionSeconds`. */
export function streamTokenTouch(p: { now: string; resolutionSeconds: string }): string {
  return `UPDATE stream_tokens t SET last_used_at = ${p.now} FROM caller
    WHERE t.id = caller.id
      AND (caller.last_used_at IS NULL
           OR caller.last_used_at < ${p.now}::timestamptz - make_interval(secs => ${p.resolutionSeconds}::float8))`;
}
