-- ed25519 signatures, Standard Webhooks v1a (issue 20, part 2; docs/api-choices.md, "Signature schemes").
--
-- An endpoint signs with HMAC (`v1`, a shared whsec_ secret, the default) or ed25519 (`v1a`, a whsk_ secret key
-- the service keeps sealed in endpoint_secrets like any secret, and a whpk_ public key anyone who reads the endpoint
-- may see). The scheme and the public key are those of the current secret version; keys still in a rotation
-- overlap keep signing whatever their scheme, since each sealed secret names its own by its prefix.
ALTER TABLE endpoints
  ADD COLUMN signature_scheme text NOT NULL DEFAULT 'hmac' CHECK (signature_scheme IN ('hmac', 'ed25519')),
  ADD COLUMN public_key text CHECK ((signature_scheme = 'ed25519') = (public_key IS NOT NULL));
