// Certificates made in the test that needs them: a certificate authority the client is told to trust, and server
// certificates it signs for chosen names and validity, so that an expired or a wrong-host certificate fails for
// that reason alone (a self-signed one would fail as untrusted first).
import { generate } from 'selfsigned';

export interface TestCertificate {
  key: string;
  cert: string;
}

const DAY_MS = 86_400_000;

export async function makeTestCa(): Promise<TestCertificate> {
  const made = await generate([{ name: 'commonName', value: 'svc test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - DAY_MS),
    notAfterDate: new Date(Date.now() + 30 * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { key: made.private, cert: made.cert };
}

export interface ServerCertificateOptions {
  /** DNS names and IP addresses it is for. */
  names: readonly string[];
  notBefore?: Date;
  notAfter?: Date;
}

export async function issueServerCertificate(
  ca: TestCertificate,
  options: ServerCertificateOptions,
): Promise<TestCertificate> {
  const notBefore = options.notBefore ?? new Date(Date.now() - DAY_MS);
  const made = await generate([{ name: 'commonName', value: options.names[0] ?? 'server' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: options.notAfter ?? new Date(notBefore.getTime() + 30 * DAY_MS),
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: options.names.map((name) =>
          /^[\d.]+$/.test(name) ? { type: 7, ip: name } : { type: 2, value: name },
        ),
      },
    ],
  });
  return { key: made.private, cert: made.cert };
}
