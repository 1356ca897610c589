-- The public key of an ed25519 secret still in its rotation overlap (docs/api-choices.md, "Signature schemes"):
-- the old key keeps signing until old_secret_expires_at, so receivers must be able to read it until then, beside the
-- current one. Set by a rotation with an overlap from an ed25519 secret; null otherwise. Rotations made before this
-- migration did not keep it: their old key stays unreadable until their overlap ends.
ALTER TABLE endpoints ADD COLUMN old_public_key text CHECK (old_public_key LIKE 'whpk\_%');
