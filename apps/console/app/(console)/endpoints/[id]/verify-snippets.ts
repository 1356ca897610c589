import type { SignatureScheme } from '../endpoint.types';

/** A receiver's check in one language, for one signature scheme. */
export interface VerifySnippet {
  language: 'Node' | 'Python' | 'Go';
  code: string;
}

/**
 * How a receiver verifies this endpoint's deliveries, after Standard Webhooks: the official `standardwebhooks`
 * libraries for HMAC (`v1`); the platform's own ed25519 for `v1a`, with the key's 32 raw bytes after `whpk_`. Each
 * checks the timestamp (5 minutes) and the raw body bytes, never a re-serialised copy.
 */
export function verifySnippets(scheme: SignatureScheme, publicKey: string | null): VerifySnippet[] {
  return scheme === 'ed25519' && publicKey !== null ? ed25519Snippets(publicKey) : hmacSnippets();
}

/** The secret itself is never on the page: the snippets read it from the receiver's environment. */
function hmacSnippets(): VerifySnippet[] {
  return [
    {
      language: 'Node',
      code: `import { Webhook } from 'standardwebhooks'; // npm install standardwebhooks

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // the endpoint's signing secret
// rawBody: the request body's exact bytes; headers: webhook-id, webhook-timestamp, webhook-signature
const payload = webhook.verify(rawBody, headers); // throws when the signature or the timestamp is wrong`,
    },
    {
      language: 'Python',
      code: `from standardwebhooks import Webhook  # pip install standardwebhooks

webhook = Webhook(os.environ["WEBHOOK_SECRET"])  # the endpoint's signing secret
payload = webhook.verify(raw_body, headers)  # raises WebhookVerificationError`,
    },
    {
      language: 'Go',
      code: `import standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

wh, err := standardwebhooks.NewWebhook(os.Getenv("WEBHOOK_SECRET")) // the endpoint's signing secret
err = wh.Verify(rawBody, r.Header) // nil when the signature and the timestamp hold`,
    },
  ];
}

function ed25519Snippets(publicKey: string): VerifySnippet[] {
  return [
    {
      language: 'Node',
      code: `import { createPublicKey, verify } from 'node:crypto';

const raw = Buffer.from('${publicKey}'.slice('whpk_'.length), 'base64');
const key = createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki',
});
function verified(headers, rawBody) {
  const id = headers['webhook-id'], ts = headers['webhook-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const content = Buffer.concat([Buffer.from(\`\${id}.\${ts}.\`), rawBody]);
  return headers['webhook-signature'].split(' ').filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, content, key, Buffer.from(s.slice(4), 'base64')));
}`,
    },
    {
      language: 'Python',
      code: `import base64, time
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

key = Ed25519PublicKey.from_public_bytes(base64.b64decode("${publicKey}"[len("whpk_"):]))

def verified(headers, raw_body: bytes) -> bool:
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(ts)) > 300:
        return False
    content = f"{msg_id}.{ts}.".encode() + raw_body
    for entry in headers["webhook-signature"].split(" "):
        if entry.startswith("v1a,"):
            try:
                key.verify(base64.b64decode(entry[4:]), content)
                return True
            except Exception:
                pass
    return False`,
    },
    {
      language: 'Go',
      code: `raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix("${publicKey}", "whpk_"))
key := ed25519.PublicKey(raw)

func verified(h http.Header, rawBody []byte) bool {
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(float64(time.Now().Unix()-sec)) > 300 {
		return false
	}
	content := append([]byte(id+"."+ts+"."), rawBody...)
	for _, entry := range strings.Split(h.Get("webhook-signature"), " ") {
		if sig, ok := strings.CutPrefix(entry, "v1a,"); ok {
			if b, err := base64.StdEncoding.DecodeString(sig); err == nil && ed25519.Verify(key, content, b) {
				return true
			}
		}
	}
	return false
}`,
    },
  ];
}
