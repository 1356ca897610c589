import http from 'node:http';
import type { ApiResponse } from './harness.js';

/**
 * POST through node:http with the headers exactly as given: an array value goes on the wire as that many header
 * lines (fetch would fold them into one). For the receive route, where a security header sent twice must be seen.
 */
export function rawPost(
  url: string,
  body: string | Buffer,
  headers: Record<string, string | string[]>,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(url), { method: 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') responseHeaders.set(name, value);
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        resolve({ status: response.statusCode ?? 0, headers: responseHeaders, text, json });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}
