-- People who sign in to the console with a name and password, and their sessions. A password is
-- kept only as libsodium's Argon2id string; a session only as the SHA-256 of its random id.

CREATE TABLE refgate_console_users (
    name            text PRIMARY KEY CHECK (name ~ '^[a-z0-9._-]{1,64}$'),
    role            text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    -- "$argon2id$v=19$m=65536,t=2,p=1$<salt>$<hash>" (crypto_pwhash_str)
    password_hash   text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
    disabled        boolean NOT NULL DEFAULT false,
    version         bigint NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    last_sign_in_at timestamptz
);

CREATE TABLE refgate_console_sessions (
    -- SHA-256 of the session id the cookie carries; the id itself is never stored.
    id_hash      bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    user_name    text NOT NULL REFERENCES refgate_console_users (name) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,  -- absolute: the idle limit can only end it sooner
    ended_at     timestamptz
);

CREATE INDEX refgate_console_sessions_live_idx ON refgate_console_sessions (user_name)
    WHERE ended_at IS NULL;

ALTER TABLE refgate_audit DROP CONSTRAINT refgate_audit_entity_check;
ALTER TABLE refgate_audit ADD CONSTRAINT refgate_audit_entity_check
    CHECK (entity IN ('partner', 'link', 'token', 'disclosure', 'user'));
